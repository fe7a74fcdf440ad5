import { createService, MemoryStorage, type Service, type ServiceOptions } from '@resourcery/core';
import { call, RAW } from './handle-support';

/** Cross-origin requests (DESIGN 13): preflight, response headers, refused origins. */

function serviceWith(options: ServiceOptions): Service {
  const service = createService(options);
  service.addResource({ name: 'Lab.Plant', storage: new MemoryStorage([{ Name: 'Fern' }]) });
  return service;
}

const preflight = (origin: string, extra: Record<string, string> = {}) => ({
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type, authorization',
    host: 'localhost:8080',
    ...extra,
  },
});

describe('cors: true allows pages on localhost, 127.0.0.1 and [::1], any port', () => {
  test.each(['http://localhost:5173', 'http://127.0.0.1:3000', 'http://[::1]:8081', 'https://localhost'])(
    'preflight from %s: 204 with the allowed methods, without authentication',
    async (origin) => {
      const service = serviceWith({ cors: true, apiKeys: [{ key: 'k' }] });
      const r = await call(service, 'OPTIONS', '/Lab.Plant', preflight(origin));
      expect(r.status).toBe(204);
      expect(r.headers['access-control-allow-origin']).toBe(origin);
      expect(r.headers['access-control-allow-methods']).toMatch(/PATCH/);
      expect(r.headers['access-control-allow-headers']).toBe('content-type, authorization');
      expect(r.headers.vary).toMatch(/Origin/);
    },
  );

  test('a response to an allowed origin carries the origin and exposes ErrorInfo, ETag, Location', async () => {
    const service = serviceWith({ cors: true });
    const ok = await call(service, 'GET', '/Lab.Plant', { headers: { ...RAW, origin: 'http://localhost:5173' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(ok.headers['access-control-expose-headers']).toMatch(/ErrorInfo/);
    expect(ok.headers['access-control-expose-headers']).toMatch(/ETag/);
    expect(ok.headers['access-control-expose-headers']).toMatch(/Location/);
    const failed = await call(service, 'GET', '/Nowhere', { headers: { origin: 'http://localhost:5173' } });
    expect(failed.status).toBe(404);
    expect(failed.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(failed.headers.errorinfo).toBeDefined();
  });

  test('a write from an allowed origin runs', async () => {
    const service = serviceWith({ cors: true });
    const r = await call(service, 'POST', '/Lab.Plant', { body: { Name: 'Moss' }, headers: { origin: 'http://127.0.0.1:5173' } });
    expect(r.status).toBe(201);
    expect(r.headers['access-control-allow-origin']).toBe('http://127.0.0.1:5173');
  });

  test('another origin: preflight and writes are 403 and change nothing; reads get no CORS headers', async () => {
    const service = serviceWith({ cors: true });
    const pre = await call(service, 'OPTIONS', '/Lab.Plant', preflight('https://evil.example'));
    expect(pre.status).toBe(403);
    expect(pre.json.ErrorCode).toBe('Forbidden');
    expect(pre.text).toMatch(/evil\.example/);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const write = await call(service, 'POST', '/Lab.Plant', {
      body: 'Name=Evil',
      headers: { origin: 'https://evil.example', 'content-type': 'text/plain' },
    });
    expect(write.status).toBe(403);
    const read = await call(service, 'GET', '/Lab.Plant', { headers: { ...RAW, origin: 'https://localhost.evil.example' } });
    expect(read.status).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    expect((await call(service, 'GET', '/Lab.Plant', { headers: RAW })).json).toEqual([{ Name: 'Fern' }]);
  });

  test('a page of the same host (explorer, LAN address) is not cross-origin', async () => {
    const service = serviceWith({ cors: true });
    const r = await call(service, 'POST', '/Lab.Plant', {
      body: { Name: 'Moss' },
      headers: { origin: 'http://192.168.1.5:8080', host: '192.168.1.5:8080' },
    });
    expect(r.status).toBe(201);
  });
});

describe('configured origins', () => {
  test('an exact origin is allowed and local ones are then not', async () => {
    const service = serviceWith({ cors: { origins: ['https://app.example'] } });
    expect((await call(service, 'OPTIONS', '/Lab.Plant', preflight('https://app.example'))).status).toBe(204);
    expect((await call(service, 'OPTIONS', '/Lab.Plant', preflight('http://localhost:5173'))).status).toBe(403);
  });

  test("'*' allows any origin", async () => {
    const service = serviceWith({ cors: { origins: ['*'], maxAge: 60 } });
    const r = await call(service, 'OPTIONS', '/Lab.Plant', preflight('https://anywhere.example'));
    expect(r.status).toBe(204);
    expect(r.headers['access-control-max-age']).toBe('60');
  });

  test('hosts: a Host header naming another host is 403 before anything runs; a listed name or a local one is served', async () => {
    const service = serviceWith({ cors: { hosts: ['local', 'myapp.test'] } });
    const evil = await call(service, 'GET', '/Lab.Plant', { headers: { ...RAW, host: 'rebound.example:8080' } });
    expect(evil.status).toBe(403);
    expect(evil.json.Message).toMatch(/rebound\.example/);
    expect((await call(service, 'POST', '/Lab.Plant', { body: { Name: 'x' }, headers: { host: 'rebound.example' } })).status).toBe(403);
    for (const host of ['localhost:8080', '127.0.0.1', '[::1]:1', 'MyApp.test:3000'])
      expect((await call(service, 'GET', '/Lab.Plant', { headers: { ...RAW, host } })).status).toBe(200);
    expect((await call(service, 'REPORT', '/Lab.Plant', { headers: RAW })).json).toBe(1);
  });

  test('an origin with a path is refused when the service is created', () => {
    expect(() => createService({ cors: { origins: ['https://app.example/path'] } })).toThrow(/origin/);
  });

  test('without cors, OPTIONS is 405 and no CORS header is sent', async () => {
    const service = serviceWith({});
    const r = await call(service, 'OPTIONS', '/Lab.Plant', preflight('http://localhost:5173'));
    expect(r.status).toBe(405);
    const g = await call(service, 'GET', '/Lab.Plant', { headers: { origin: 'http://localhost:5173' } });
    expect(g.headers['access-control-allow-origin']).toBeUndefined();
  });
});
