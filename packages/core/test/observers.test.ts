import { createService, type ResponseInfo } from '@resourcery/core';
import { call, RAW } from './handle-support';

/** The onRequest/onResponse hook pair and service.observe (docs/operations.md). */

function people(options: Parameters<typeof createService>[0] = {}) {
  const s = createService(options);
  s.addResource({ name: 'Person', key: 'Id' });
  return s;
}

describe('onRequest and onResponse', () => {
  test('each client request is told once, with its resource, status, durations and the state onRequest returned', async () => {
    const seen: Array<{ response: ResponseInfo; state: unknown }> = [];
    const requests: string[] = [];
    const s = people({
      onRequest: (request) => {
        requests.push(`${request.method} ${request.uri}`);
        return { id: request.headers['x-request-id'] };
      },
      onResponse: (response, state) => seen.push({ response, state }),
    });
    await call(s, 'POST', '/Person', { body: [{ Id: 1, Name: 'ann' }], headers: { 'x-request-id': 'a' } });
    await call(s, 'GET', '/Person/Id=1', { headers: { ...RAW, 'x-request-id': 'b' } });
    await call(s, 'get', '/Nobody');
    await call(s, 'GET', '/Person/_/limit=many');
    expect(requests).toEqual(['POST /Person', 'GET /Person/Id=1', 'GET /Nobody', 'GET /Person/_/limit=many']);
    expect(seen.map((x) => [x.response.method, x.response.resource, x.response.status, x.state])).toEqual([
      ['POST', 'Person', 201, { id: 'a' }],
      ['GET', 'Person', 200, { id: 'b' }],
      ['GET', undefined, 404, { id: undefined }],
      ['GET', 'Person', 400, { id: undefined }],
    ]);
    for (const { response } of seen) expect(response.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen[0].response.operationMs).toBeGreaterThanOrEqual(0);
    expect(seen[1].response.operationMs).toBeLessThanOrEqual(seen[1].response.durationMs);
    expect(seen[2].response.operationMs).toBeUndefined();
  });

  test('an async step (authenticate) is observed when it settles; a 401 has no resource', async () => {
    const statuses: Array<[number, string | undefined]> = [];
    const s = people({
      authenticate: async (request) => {
        await new Promise((r) => setImmediate(r));
        if (request.headers.authorization !== 'ok') throw new Error('no');
        return 'user';
      },
      onResponse: (r) => statuses.push([r.status, r.resource]),
    });
    await call(s, 'GET', '/Person', { headers: { authorization: 'ok' } });
    await call(s, 'GET', '/Person');
    expect(statuses).toEqual([
      [204, 'Person'],
      [401, undefined],
    ]);
  });

  test('an observer that throws changes no answer; observe() adds one and its result removes it', async () => {
    const s = people({
      onRequest: () => {
        throw new Error('logger down');
      },
      onResponse: () => {
        throw new Error('logger down');
      },
    });
    expect((await call(s, 'POST', '/Person', { body: [{ Id: 1 }] })).status).toBe(201);
    const statuses: number[] = [];
    const stop = s.observe({ onResponse: (r) => statuses.push(r.status) });
    await call(s, 'GET', '/Person', { headers: RAW });
    stop();
    await call(s, 'GET', '/Person', { headers: RAW });
    expect(statuses).toEqual([200]);
  });

  test('requests answered under CORS are observed, preflights too', async () => {
    const uris: string[] = [];
    const s = people({ cors: true, onResponse: (r) => uris.push(`${r.status} ${r.uri}`) });
    await call(s, 'GET', '/Person', { headers: { origin: 'http://localhost:5173', host: 'localhost:8080' } });
    await call(s, 'OPTIONS', '/Person', {
      headers: { origin: 'http://localhost:5173', host: 'localhost:8080', 'access-control-request-method': 'GET' },
    });
    expect(uris).toEqual(['204 /Person', '204 /Person']);
  });
});
