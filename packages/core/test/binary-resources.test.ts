import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createService, ServiceError, type BinaryRequest, type Service } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { call } from './handle-support';

/** Binary resources (docs/binary-resources.md): bytes an app makes per request, GET and HEAD only. */

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

function reports(seen: Array<{ request: BinaryRequest; principal: unknown }> = []): Service {
  const service = createService({
    authenticate: (request) => request.headers['x-user'] ?? 'nobody',
    admin: { rules: { allow: () => true } },
  });
  service.addBinaryResource({
    name: 'Report.Csv',
    description: 'Sales of a month as CSV',
    contentType: 'text/csv; charset=utf-8',
    read: (request, caller) => {
      seen.push({ request, principal: caller.principal });
      const month = request.params.Month;
      if (month === undefined) throw new ServiceError('InvalidConditionSyntax', 'Give the month: /Report.Csv/Month=2026-11');
      if (month === '1999-01') return null;
      return { body: `month,total\n${month},42\n`, version: `v-${month}` };
    },
    rules: { allow: (caller) => caller.principal !== 'guest' },
  });
  service.addBinaryResource({ name: 'Chart', contentType: 'image/png', read: () => new Uint8Array(PNG) });
  return service;
}

const as = (user: string, accept = 'application/json') => ({ headers: { 'x-user': user, accept } });

test('GET hands the conditions and the caller to the reader; the bytes go out as they are, whatever Accept asks', async () => {
  const seen: Array<{ request: BinaryRequest; principal: unknown }> = [];
  const service = reports(seen);
  const r = await call(service, 'GET', '/Report.Csv/Month=2026-11&Pages<=3', as('ann', 'application/json;raw=true'));
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
  expect(r.text).toBe('month,total\n2026-11,42\n');
  expect(seen[0].principal).toBe('ann');
  expect(seen[0].request).toMatchObject({
    resource: 'Report.Csv',
    method: 'GET',
    uri: '/Report.Csv/Month=2026-11&Pages<=3',
    params: { Month: '2026-11' },
    conditions: [
      { property: 'Month', operator: '=', value: '2026-11' },
      { property: 'Pages', operator: '<=', value: '3' },
    ],
  });
  // By its dot-suffix, and with an Accept it cannot satisfy.
  const chart = await call(service, 'GET', '/chart', as('ann', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'));
  expect(chart.status).toBe(200);
  expect(chart.headers['content-type']).toBe('image/png');
  expect(Buffer.from(chart.body as Uint8Array)).toEqual(PNG);
});

test('nothing to send is 204; a reader that refuses answers its error; meta-conditions and a Destination are refused', async () => {
  const service = reports();
  expect((await call(service, 'GET', '/Report.Csv/Month=1999-01', as('ann'))).status).toBe(204);
  const refused = await call(service, 'GET', '/Report.Csv', as('ann'));
  expect(refused.status).toBe(400);
  expect(refused.json.ErrorCode).toBe('InvalidConditionSyntax');
  expect((await call(service, 'GET', '/Report.Csv/Month=2026-11/limit=1', as('ann'))).json.ErrorCode).toBe('InvalidMetaConditionKey');
  expect((await call(service, 'GET', '/Report.Csv/Month=2026-11|2026-12', as('ann'))).json.ErrorCode).toBe('InvalidConditionSyntax');
  const sent = await call(service, 'GET', '/Chart', { headers: { 'x-user': 'ann', destination: 'POST /Report.Csv' } });
  expect(sent.json.ErrorCode).toBe('InvalidDestination');
});

test.each(['POST', 'PUT', 'PATCH', 'DELETE', 'REPORT'])('%s is 405 with Allow: GET, HEAD', async (method) => {
  const r = await call(reports(), method, '/Report.Csv/Month=2026-11', { headers: { 'x-user': 'ann' }, body: '{"a":1}' });
  expect(r.status).toBe(405);
  expect(r.headers.allow).toBe('GET, HEAD');
});

test('HEAD has the headers and no body, and lets the stream go unread', async () => {
  const service = createService();
  let closed = false;
  let read = 0;
  service.addBinaryResource({
    name: 'Big',
    contentType: 'application/octet-stream',
    read: () =>
      new Readable({
        read() {
          read++;
          this.push(Buffer.alloc(1024));
        },
        destroy(error, done) {
          closed = true;
          done(error);
        },
      }),
  });
  const r = await service.handle({ method: 'HEAD', uri: '/Big', headers: {} });
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('application/octet-stream');
  expect(r.body).toBeNull();
  expect(closed).toBe(true);
  expect(read).toBeLessThanOrEqual(1);
});

test('a version is the ETag: If-None-Match naming it is 304, If-Match naming another 412', async () => {
  const service = reports();
  const first = await call(service, 'GET', '/Report.Csv/Month=2026-11', as('ann'));
  expect(first.headers.etag).toBe('"v-2026-11"');
  const again = await call(service, 'GET', '/Report.Csv/Month=2026-11', { headers: { 'x-user': 'ann', 'if-none-match': '"v-2026-11"' } });
  expect(again.status).toBe(304);
  expect(again.text).toBe('');
  const other = await call(service, 'GET', '/Report.Csv/Month=2026-12', { headers: { 'x-user': 'ann', 'if-none-match': '"v-2026-11"' } });
  expect(other.status).toBe(200);
  const stale = await call(service, 'GET', '/Report.Csv/Month=2026-12', { headers: { 'x-user': 'ann', 'if-match': '"v-2026-11"' } });
  expect(stale.status).toBe(412);
  // No version: no ETag, and If-None-Match never matches.
  const chart = await call(service, 'GET', '/Chart', { headers: { 'if-none-match': '"x"' } });
  expect(chart.status).toBe(200);
  expect(chart.headers.etag).toBeUndefined();
});

test('rights apply as for any resource: a caller the rules refuse is 403 and the reader is not asked', async () => {
  const seen: Array<{ request: BinaryRequest; principal: unknown }> = [];
  const service = reports(seen);
  const r = await call(service, 'GET', '/Report.Csv/Month=2026-11', as('guest'));
  expect(r.status).toBe(403);
  expect(r.json.ErrorCode).toBe('Forbidden');
  expect((await call(service, 'HEAD', '/Report.Csv/Month=2026-11', as('guest'))).status).toBe(403);
  expect(seen).toEqual([]);
  // Nor is it shown to that caller: not listed, not in its OpenAPI document; ann sees it.
  const names = async (user: string) =>
    (await call(service, 'GET', '/Service.AvailableResource/Kind=BinaryResource', as(user, 'application/json;raw=true'))).json.map(
      (r: { Name: string }) => r.Name,
    );
  expect(await names('guest')).toEqual(['Chart']);
  expect(await names('ann')).toEqual(['Report.Csv', 'Chart']);
  const paths = async (user: string) => Object.keys((await call(service, 'GET', '/', as(user, 'application/openapi+json'))).json.paths);
  expect(await paths('guest')).not.toContain('/Report.Csv');
  expect(await paths('ann')).toContain('/Report.Csv');
});

test('listed with Kind BinaryResource, its methods and content type; described in the OpenAPI document', async () => {
  const service = reports();
  const listed = await call(service, 'GET', '/Service.AvailableResource/Kind=BinaryResource', as('ann', 'application/json;raw=true'));
  expect(listed.json).toEqual([
    {
      Name: 'Report.Csv',
      Description: 'Sales of a month as CSV',
      Methods: ['GET', 'HEAD'],
      Kind: 'BinaryResource',
      Views: [],
      ContentType: 'text/csv; charset=utf-8',
    },
    { Name: 'Chart', Description: '', Methods: ['GET', 'HEAD'], Kind: 'BinaryResource', Views: [], ContentType: 'image/png' },
  ]);
  const doc = service.openapi() as any;
  expect(Object.keys(doc.paths['/Report.Csv/{conditions}'])).toEqual(expect.arrayContaining(['get', 'head', 'parameters']));
  expect(doc.paths['/Chart'].get.responses[200].content).toEqual({
    'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } },
  });
  expect(doc['x-resources'].find((r: { name: string }) => r.name === 'Chart')).toMatchObject({
    kind: 'BinaryResource',
    contentType: 'image/png',
  });
});

test('a stream goes out as it is read, with backpressure, over HTTP and through service.fetch; a client that leaves closes it', async () => {
  const made = { chunks: 0, closed: 0 };
  const service = createService();
  service.addBinaryResource({
    name: 'Endless',
    contentType: 'application/octet-stream',
    read: () => ({
      body: (async function* () {
        try {
          // 64 KiB chunks without end: only what the client takes may be made.
          for (;;) {
            made.chunks++;
            yield new Uint8Array(65536);
          }
        } finally {
          made.closed++;
        }
      })(),
    }),
  });
  const server = createServer(service);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    // Read 1 MiB, then stop reading for a while: the server may fill the socket buffers, no more.
    const got = await new Promise<number>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/Endless' }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes >= 1 << 20) {
            res.pause();
            setImmediate(() => {
              req.destroy();
              resolve(bytes);
            });
          }
        });
      });
      req.on('error', reject);
    });
    expect(got).toBeGreaterThanOrEqual(1 << 20);
    await waitUntil(() => made.closed === 1);
    // Made: what was read, plus what the socket buffers held; not an endless stream.
    expect(made.chunks).toBeLessThan(400);

    const before = made.chunks;
    const response = await service.fetch(new Request('http://x/Endless'));
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    const reader = response.body!.getReader();
    for (let i = 0; i < 3; i++) await reader.read();
    await reader.cancel();
    await waitUntil(() => made.closed === 2);
    expect(made.chunks - before).toBeLessThan(20);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('a stream that fails midway cuts the body short and is reported as any failure', async () => {
  const errors: string[] = [];
  const service = createService({ onError: (e) => void errors.push(e.message) });
  service.addBinaryResource({
    name: 'Broken',
    contentType: 'text/plain',
    read: () =>
      (async function* () {
        yield 'first line\n';
        throw new Error('the disk went away');
      })(),
  });
  const r = await service.handle({ method: 'GET', uri: '/Broken', headers: {} });
  expect(r.status).toBe(200);
  const got: string[] = [];
  await expect(
    (async () => {
      for await (const chunk of r.body as AsyncIterable<string>) got.push(chunk);
    })(),
  ).rejects.toThrow('the disk went away');
  expect(got).toEqual(['first line\n']);
  expect(errors).toEqual(['the disk went away']);
});

test('a definition without a reader or a content type is refused when declared', () => {
  const service = createService();
  expect(() => service.addBinaryResource({ name: 'X', contentType: 'nope', read: () => null })).toThrow(/contentType/);
  expect(() => service.addBinaryResource({ name: 'Y', contentType: 'text/plain' } as never)).toThrow(/read/);
});

async function waitUntil(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
}
