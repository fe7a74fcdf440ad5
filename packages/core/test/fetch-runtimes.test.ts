import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { createService, MemoryStorage, type Service } from '@resourcery/core';
import * as route from './fetch-route';

/** service.fetch(request, { basePath, context }) under Hono, a Next.js-style route module and plain Requests. */

type Principal = { user: string };

/** Guests read; a named user writes; the hook records who wrote. */
function gardenService(written: string[] = []): Service {
  const service = createService({
    authenticate: (_request, context: { user?: string } | undefined) => ({ user: context?.user ?? 'guest' }),
  });
  service.addResource({
    name: 'Garden.Plant',
    storage: new MemoryStorage([
      { Name: 'Fern', Height: 40 },
      { Name: 'Moss', Height: 2 },
    ]),
    rules: { allow: (caller, method) => method === 'GET' || (caller.principal as Principal).user !== 'guest' },
    hooks: {
      afterInsert: (_entities, caller) => {
        written.push((caller.principal as Principal).user);
      },
    },
  });
  return service;
}

const PLANT = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Name: 'Ivy', Height: 300 }) };
const RAW = { accept: 'application/json;raw=true' };

describe('plain Requests: context reaches authenticate, rules and hooks', () => {
  test('a write without a user is 403; with one it is stored and the hook sees the user', async () => {
    const written: string[] = [];
    const service = gardenService(written);
    expect((await service.fetch(new Request('http://x/api/Plant', PLANT), { basePath: '/api' })).status).toBe(403);
    const res = await service.fetch(new Request('http://x/api/Plant', PLANT), { basePath: '/api', context: { user: 'ann' } });
    expect(res.status).toBe(201);
    expect(written).toEqual(['ann']);
  });

  test('basePath: links carry it, and a request outside it is 404', async () => {
    const service = gardenService();
    const res = await service.fetch(new Request('http://x/api/Nowhere'), { basePath: '/api' });
    expect(res.status).toBe(404);
    expect(res.headers.get('errorinfo')).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
    expect((await service.fetch(new Request('http://x/other/Plant'), { basePath: '/api' })).status).toBe(404);
  });
});

describe('Hono (@hono/node-server on 127.0.0.1:0)', () => {
  let server: ServerType | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  async function start(app: Hono<{ Variables: { user?: string } }>): Promise<string> {
    return new Promise((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
  }

  function honoApp(mount: (app: Hono<{ Variables: { user?: string } }>, service: Service) => void, written: string[]) {
    const app = new Hono<{ Variables: { user?: string } }>();
    // The app's own authentication middleware (a session, a JWT): here a header.
    app.use(async (c, next) => {
      c.set('user', c.req.header('x-user'));
      await next();
    });
    app.get('/health', (c) => c.json({ ok: true }));
    mount(app, gardenService(written));
    return app;
  }

  const mounts: Array<[string, (app: Hono<{ Variables: { user?: string } }>, service: Service) => void]> = [
    [
      'a route (app.all)',
      (app, service) => app.all('/api/*', (c) => service.fetch(c.req.raw, { basePath: '/api', context: { user: c.get('user') } })),
    ],
    [
      'app.mount with optionHandler',
      (app, service) =>
        app.mount('/api', (request, context) => service.fetch(request, { basePath: '/api', context }), {
          optionHandler: (c) => ({ user: c.get('user') }),
          replaceRequest: false,
        }),
    ],
  ];

  test.each(mounts)('mounted by %s: queries, REPORT, context to rules and hooks, links under /api', async (_label, mount) => {
    const written: string[] = [];
    const origin = await start(honoApp(mount, written));
    const read = await fetch(`${origin}/api/Plant/Height%3E10/select=Name`, { headers: RAW });
    expect(await read.json()).toEqual([{ Name: 'Fern' }]);
    const report = await fetch(`${origin}/api/Plant`, { method: 'REPORT', headers: RAW });
    expect(await report.text()).toBe('2');
    expect((await fetch(`${origin}/api/Plant`, PLANT)).status).toBe(403);
    expect((await fetch(`${origin}/api/Plant`, { ...PLANT, headers: { ...PLANT.headers, 'x-user': 'ann' } })).status).toBe(201);
    expect(written).toEqual(['ann']);
    const missing = await fetch(`${origin}/api/Nowhere`);
    expect(missing.headers.get('errorinfo')).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
    expect(await (await fetch(`${origin}/health`)).json()).toEqual({ ok: true });
  });
});

describe('a Next.js-style route handler module (app/api/[...path]/route.ts)', () => {
  const params = { params: Promise.resolve({ path: ['Plant'] }) };

  test('GET reads under /api; POST takes the session user as context', async () => {
    const read = await route.GET(new Request('http://localhost:3000/api/Plant/Name=Moss', { headers: RAW }), params);
    expect(await read.json()).toEqual([{ Name: 'Moss', Height: 2 }]);
    expect((await route.POST(new Request('http://localhost:3000/api/Plant', PLANT), params)).status).toBe(403);
    const posted = await route.POST(
      new Request('http://localhost:3000/api/Plant', { ...PLANT, headers: { ...PLANT.headers, 'x-user': 'ann' } }),
      params,
    );
    expect(posted.status).toBe(201);
    const head = await route.HEAD(new Request('http://localhost:3000/api/Plant/Name=Ivy', { method: 'HEAD' }), params);
    expect([head.status, await head.text()]).toEqual([200, '']);
    const error = await route.GET(new Request('http://localhost:3000/api/Nowhere'), params);
    expect(error.headers.get('errorinfo')).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
  });
});
