import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createService, MemoryStorage, type ContentType, type Service } from '@resourcery/core';
import { createServer, type NodeAdapterOptions } from '@resourcery/node';
import { userService } from './adapter-support';

/** The node:http adapter over a real socket. */

const SENSORS = [
  { Id: 't1', Value: 12 },
  { Id: 't2', Value: 25 },
  { Id: 't3', Value: 31 },
];

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  socket: Socket;
}

interface Sent {
  method?: string;
  /** Sent as written: node:http does not re-encode a request path. */
  path: string;
  headers?: Record<string, string>;
  /** Chunks are written one by one, waiting a tick between them. */
  body?: string | string[];
  agent?: http.Agent;
}

const servers: http.Server[] = [];

async function start(service: Service, options?: NodeAdapterOptions): Promise<number> {
  const server = createServer(service, options);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function send(port: number, sent: Sent): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: sent.method ?? 'GET', path: sent.path, headers: sent.headers, agent: sent.agent ?? false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, socket: req.socket! }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    const chunks = sent.body === undefined ? [] : Array.isArray(sent.body) ? sent.body : [sent.body];
    (async () => {
      for (const chunk of chunks) {
        req.write(chunk);
        await new Promise((r) => setImmediate(r));
      }
      req.end();
    })();
  });
}

function sensors(): { service: Service; storage: MemoryStorage } {
  const service = createService();
  const storage = new MemoryStorage(SENSORS.map((s) => ({ ...s })));
  service.addResource({ name: 'Lab.Sensor', storage });
  return { service, storage };
}

const RAW = { accept: 'application/json;raw=true' };

describe('condition operators work raw and percent-encoded in the request target', () => {
  test.each([
    ['/Lab.Sensor/Value>20', ['t2', 't3']],
    ['/Lab.Sensor/Value%3E20', ['t2', 't3']],
    ['/Lab.Sensor/Value%3e20', ['t2', 't3']],
    ['/Lab.Sensor/Value<25', ['t1']],
    ['/Lab.Sensor/Value%3C25', ['t1']],
    ['/Lab.Sensor/Value<=25', ['t1', 't2']],
    ['/Lab.Sensor/Value%3C=25', ['t1', 't2']],
    ['/Lab.Sensor/Value>=25&Value<31', ['t2']],
    ['/Lab.Sensor/Value%3E=25&Value%3C31', ['t2']],
  ])('%s', async (path, ids) => {
    const port = await start(sensors().service);
    const r = await send(port, { path, headers: RAW });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).map((s: { Id: string }) => s.Id)).toEqual(ids);
  });

  test('encoded & and / inside a value stay data', async () => {
    const { service } = sensors();
    service.addResource({ name: 'Lab.Note', storage: new MemoryStorage([{ Text: 'a&b/c' }, { Text: 'a' }]) });
    const port = await start(service);
    const r = await send(port, { path: '/Lab.Note/Text=a%26b%2Fc', headers: RAW });
    expect(JSON.parse(r.text)).toEqual([{ Text: 'a&b/c' }]);
  });

  test('a query string is 400, showing the path form (DESIGN 13)', async () => {
    const port = await start(sensors().service);
    const r = await send(port, { path: '/Lab.Sensor/Id=t1?cache=no', headers: RAW });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).Message).toContain('/Lab.Sensor/Id=t1&cache=no');
  });
});

describe('responses are written with their status, headers and body', () => {
  test('a JSON body gets Content-Length', async () => {
    const port = await start(sensors().service);
    const r = await send(port, { path: '/Lab.Sensor/Id=t2' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text));
    expect(JSON.parse(r.text).Data).toEqual([SENSORS[1]]);
  });

  test('an error keeps its status and ErrorInfo header', async () => {
    const port = await start(sensors().service);
    const r = await send(port, { path: '/Lab.Nothing' });
    expect(r.status).toBe(404);
    expect(r.headers.errorinfo).toBe(JSON.parse(r.text).MoreInfoAt);
  });

  test('HEAD: 200 or 204 and no body', async () => {
    const port = await start(sensors().service);
    const found = await send(port, { method: 'HEAD', path: '/Lab.Sensor/Value>20' });
    expect(found.status).toBe(200);
    expect(found.text).toBe('');
    const none = await send(port, { method: 'HEAD', path: '/Lab.Sensor/Value>100' });
    expect(none.status).toBe(204);
    expect(none.text).toBe('');
  });
});

describe('request bodies are streamed into the service', () => {
  test('a chunked body in several pieces is read whole', async () => {
    const { service, storage } = sensors();
    const port = await start(service);
    const r = await send(port, {
      method: 'POST',
      path: '/Lab.Sensor',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: ['[{"Id":"t4",', '"Value":40},', '{"Id":"t5","Value":', '50}]'],
    });
    expect(r.status).toBe(201);
    expect(JSON.parse(r.text).InsertedCount).toBe(2);
    expect(storage.all().slice(3)).toEqual([
      { Id: 't4', Value: 40 },
      { Id: 't5', Value: 50 },
    ]);
  });

  test('a body with Content-Length is read', async () => {
    const { service, storage } = sensors();
    const port = await start(service);
    const body = JSON.stringify({ Value: 13 });
    const r = await send(port, {
      method: 'PATCH',
      path: '/Lab.Sensor/Id=t1',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
    expect(r.status).toBe(200);
    expect(storage.all()[0]).toEqual({ Id: 't1', Value: 13 });
  });

  test('no body: 400 NoDataSource', async () => {
    const port = await start(sensors().service);
    const r = await send(port, { method: 'POST', path: '/Lab.Sensor' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).ErrorCode).toBe('NoDataSource');
  });

  test.each([
    ['with Content-Length', { 'content-length': String(200_000) }],
    ['chunked', { 'transfer-encoding': 'chunked' }],
  ])('a body over maxBodyBytes (%s) is answered with 413, not a broken connection', async (_how, headers) => {
    const service = createService({ maxBodyBytes: 1024 });
    service.addResource({ name: 'Lab.Sensor' });
    const port = await start(service);
    const chunk = 'x'.repeat(10_000);
    const r = await send(port, {
      method: 'POST',
      path: '/Lab.Sensor',
      headers: { 'content-type': 'application/json', ...headers },
      body: Array.from({ length: 20 }, () => chunk),
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text).ErrorCode).toBe('PayloadTooLarge');
  });
});

describe('basePath mounts the service under a path', () => {
  test('requests under the base path are served; MoreInfoAt includes it', async () => {
    const port = await start(sensors().service, { basePath: '/api' });
    expect(JSON.parse((await send(port, { path: '/api/Lab.Sensor/Id=t3', headers: RAW })).text)).toEqual([SENSORS[2]]);
    const error = await send(port, { path: '/api/Lab.Nothing' });
    const link = JSON.parse(error.text).MoreInfoAt;
    expect(link).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
    const record = await send(port, { path: link, headers: RAW });
    expect(JSON.parse(record.text)[0].Uri).toBe('/api/Lab.Nothing');
  });

  test('a base path given with a trailing slash makes the same links', async () => {
    const port = await start(sensors().service, { basePath: '/api/' });
    const error = await send(port, { path: '/api/Lab.Nothing' });
    const link = JSON.parse(error.text).MoreInfoAt;
    expect(link).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
    expect(JSON.parse(error.text).Uri).toBe('/api/Lab.Nothing');
    const record = await send(port, { path: link, headers: RAW });
    expect(record.status).toBe(200);
    expect(JSON.parse(record.text)[0].Uri).toBe('/api/Lab.Nothing');
  });

  test('the base path alone is the resource listing', async () => {
    const port = await start(sensors().service, { basePath: '/api/' });
    for (const path of ['/api', '/api/']) {
      const r = await send(port, { path, headers: RAW });
      expect([path, r.status]).toEqual([path, 200]);
      expect(JSON.parse(r.text).map((e: { Name: string }) => e.Name)).toContain('Lab.Sensor');
    }
  });

  test.each(['/Lab.Sensor', '/apiary/Lab.Sensor', '/', '/ap'])('%s outside the base path: 404', async (path) => {
    const port = await start(sensors().service, { basePath: '/api' });
    expect((await send(port, { path })).status).toBe(404);
  });
});

describe('connections are kept alive between requests', () => {
  test('GET, POST with a body, GET again: one connection', async () => {
    const { service } = sensors();
    const server = createServer(service);
    servers.push(server);
    let connections = 0;
    server.on('connection', () => {
      connections++;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await send(port, { path: '/Lab.Sensor', agent });
      const post = await send(port, {
        method: 'POST',
        path: '/Lab.Sensor',
        headers: { 'content-type': 'application/json' },
        body: '{"Id":"t9","Value":9}',
        agent,
      });
      const error = await send(port, { path: '/Lab.Nothing', agent });
      const last = await send(port, { path: '/Lab.Sensor/Id=t9', headers: RAW, agent });
      expect([first.status, post.status, error.status, last.status]).toEqual([200, 201, 404, 200]);
      expect(JSON.parse(last.text)).toEqual([{ Id: 't9', Value: 9 }]);
      expect(connections).toBe(1);
      expect(last.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  });
});

describe('a body no operation needs, past maxBodyBytes (issue 24: GET with a large body)', () => {
  // An error is recorded with the request's body; reading a body past the limit for that
  // broke the connection, and the next request on it was reset.
  test.each([
    ['with Content-Length', (body: string) => body],
    ['chunked', (body: string) => [body.slice(0, 30_000), body.slice(30_000)]],
  ])('%s: the error is answered and the connection serves the next request', async (_, chunks) => {
    const service = createService({ maxBodyBytes: 1000 });
    service.addResource({ name: 'Lab.Sensor', storage: new MemoryStorage(SENSORS.map((e) => ({ ...e }))) });
    const server = createServer(service);
    servers.push(server);
    let connections = 0;
    server.on('connection', () => {
      connections++;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const body = 'a'.repeat(100_000);
      const sent = chunks(body);
      const length: Record<string, string> = Array.isArray(sent)
        ? { 'transfer-encoding': 'chunked' }
        : { 'content-length': String(body.length) };
      const headers = { 'content-type': 'application/json', ...length };
      const failed = await send(port, { path: '/Lab.Nothing', headers, body: sent, agent });
      const next = await send(port, { path: '/Lab.Sensor/Id=t2', headers: RAW, agent });
      expect([failed.status, next.status, JSON.parse(next.text)]).toEqual([404, 200, [{ Id: 't2', Value: 25 }]]);
      expect(connections).toBe(1);
      const record = await send(port, { path: String(failed.headers.errorinfo), headers: RAW, agent });
      const recorded = Array.isArray(sent) ? '' : '<100000 bytes, more than the limit of 1000: not read>';
      expect(JSON.parse(record.text)[0].Body).toBe(recorded);
    } finally {
      agent.destroy();
    }
  });
});

describe('streamed response bodies', () => {
  /** A write-only content type that streams `count` chunks and reports what happened. */
  function ticks(count: number, size: number) {
    const state = { produced: 0, returned: false, finished: false };
    const type: ContentType = {
      name: 'Ticks',
      mimeType: 'application/x-ticks',
      bindings: ['ticks'],
      write: () => ({
        [Symbol.asyncIterator]() {
          const chunks = (async function* () {
            for (let i = 0; i < count; i++) {
              state.produced++;
              yield `${String(i).padStart(8, '0')}${'.'.repeat(size - 9)}\n`;
            }
            state.finished = true;
          })();
          return {
            next: () => chunks.next(),
            return: (value?: unknown) => {
              state.returned = true;
              return chunks.return(value as undefined);
            },
          };
        },
      }),
    };
    const service = createService({ protocols: [{ name: 'Ticks', identifier: 'ticks', contentTypes: [type] }] });
    service.addResource({ name: 'Lab.Sensor', storage: new MemoryStorage(SENSORS) });
    return { service, state, type };
  }

  async function until(check: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 400; i++) {
      if (check()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`Gave up waiting until ${what}`);
  }

  test('every chunk arrives, in order, chunked', async () => {
    const { service, state } = ticks(500, 32);
    const port = await start(service);
    const r = await send(port, { path: '/Lab.Sensor', headers: { accept: 'application/x-ticks' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/x-ticks');
    expect(r.headers['transfer-encoding']).toBe('chunked');
    const lines = r.text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(500);
    expect(lines.map((l) => Number(l.slice(0, 8)))).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(state.finished).toBe(true);
  });

  test('a client that stops reading holds the producer back; leaving ends the iteration', async () => {
    const total = 2000;
    const { service, state } = ticks(total, 64 * 1024);
    const port = await start(service);
    const req = http.get({ host: '127.0.0.1', port, path: '/Lab.Sensor', headers: { accept: 'application/x-ticks' }, agent: false });
    req.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      req.on('response', (res) => {
        res.once('data', () => {
          res.pause();
          resolve();
        });
      });
    });
    // Wait until the producer stalls: the socket buffers are full and write() said so.
    let last = -1;
    let steady = 0;
    await until(() => {
      steady = state.produced === last ? steady + 1 : 0;
      last = state.produced;
      return steady >= 4;
    }, 'the producer stalls');
    expect(state.produced).toBeLessThan(total);
    req.destroy();
    await until(() => state.returned, "the iterator's return() is called");
    expect(state.finished).toBe(false);
    expect(state.produced).toBeLessThan(total);
  });
  test('a client that leaves before the headers ends the iteration too', async () => {
    const { state, type } = ticks(2000, 64 * 1024);
    // The answer comes only after the client has gone (a slow storage).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = createService({ protocols: [{ name: 'Ticks', identifier: 'ticks', contentTypes: [type] }] });
    const memory = new MemoryStorage(SENSORS);
    slow.addResource({
      name: 'Lab.Sensor',
      storage: { select: async (q) => (await released, memory.select(q)), write: (b) => memory.write(b) },
    });
    const port = await start(slow);
    const req = http.get({ host: '127.0.0.1', port, path: '/Lab.Sensor', headers: { accept: 'application/x-ticks' }, agent: false });
    req.on('error', () => undefined);
    await new Promise<void>((resolve) => req.on('socket', (socket) => socket.on('connect', resolve)));
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    await new Promise((r) => setTimeout(r, 50));
    release();
    await until(() => state.returned, "the iterator's return() is called");
    expect(state.produced).toBeLessThan(2000);
  });
});

describe("the context option hands the app's per-request context to the service", () => {
  test('authenticate sees what context(req, res) returned', async () => {
    const port = await start(userService(), { context: (req) => ({ user: req.headers['x-user'] }) });
    expect((await send(port, { path: '/Product', headers: { 'x-user': 'ann' } })).status).toBe(200);
    expect((await send(port, { path: '/Product' })).status).toBe(401);
  });
});

describe('downloads of resources named outside Latin-1 (RFC 6266)', () => {
  test('Excel and JSON Lines of /日本 carry an ASCII filename and a UTF-8 filename*', async () => {
    const service = createService();
    service.addResource({ name: '日本', storage: new MemoryStorage([{ Id: 1 }]) });
    const port = await start(service);
    for (const [accept, ext] of [
      ['excel', 'xlsx'],
      ['jl', 'jsonl'],
    ]) {
      const r = await send(port, { path: `/${encodeURIComponent('日本')}`, headers: { accept } });
      expect(r.status).toBe(200);
      expect(r.headers['content-disposition']).toMatch(
        new RegExp(`^attachment; filename="___\\d{12}\\.${ext}"; filename\\*=UTF-8''%E6%97%A5%E6%9C%AC_\\d{12}\\.${ext}$`),
      );
    }
  });
});

test('a whole body goes out with the headers the service gave and its own Content-Length, once', async () => {
  const handle = async () => ({ status: 200, headers: { 'content-length': '999', 'x-answer': 'yes', etag: '"v1"' }, body: 'ok, é' });
  const port = await start({ handle } as unknown as Service);
  const reply = await send(port, { path: '/Anything' });
  expect([reply.status, reply.text, reply.headers['x-answer'], reply.headers.etag]).toEqual([200, 'ok, é', 'yes', '"v1"']);
  expect(reply.headers['content-length']).toBe(String(Buffer.byteLength('ok, é')));
});

describe('a failure of the library itself is a 500, never an uncaught exception', () => {
  test.each([
    [
      'throws at once',
      () => {
        throw new Error('broken service');
      },
    ],
    ['rejects', () => Promise.reject(new Error('broken service'))],
  ])('handle %s', async (_, handle) => {
    const port = await start({ handle } as unknown as Service);
    const reply = await send(port, { path: '/Lab.Sensor' });
    expect([reply.status, reply.text]).toEqual([500, 'Error: broken service']);
  });
});

test("a context option that throws is a 500 for that request, not the server's crash", async () => {
  const context = () => {
    throw new Error('no session store');
  };
  const port = await start(createService(), { context });
  const reply = await send(port, { path: '/Anything' });
  expect([reply.status, reply.text]).toEqual([500, 'Error: no session store']);
  expect((await send(port, { path: '/Anything' })).status).toBe(500);
});
