import http from 'node:http';
import fastify5, { type FastifyInstance } from 'fastify';
import fastify4 from 'fastify4';
import { Service, type PlainResponse } from '@resourcery/core';
import { resourceryFastify } from '@resourcery/fastify';
// The same shop data, streaming content type and raw-path client as the other adapters' tests.
import {
  firstChunk,
  gatedBinary,
  gatedLines,
  listen,
  shopService,
  userService,
  withProducts,
  type Listening,
} from '../../node/test/adapter-support';

type Fastify = typeof fastify5;
type App = FastifyInstance;

const RAW = { accept: 'application/json;raw=true' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const NEW_PRODUCT = JSON.stringify({ Sku: 'T-9', Name: 'Tape', Price: 3 });

const open: Listening[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe.each([
  ['Fastify 5', fastify5],
  ['Fastify 4', fastify4 as unknown as Fastify],
])('%s', (_name, fastify) => {
  /** A Fastify app on a real server at 127.0.0.1:0 (Fastify's own handler, through serverFactory). */
  async function start(setup: (app: App) => unknown): Promise<Listening> {
    let handler!: http.RequestListener;
    const app = fastify({
      serverFactory: (h) => {
        handler = h as http.RequestListener;
        return http.createServer(h);
      },
    }) as unknown as App;
    await setup(app);
    await app.ready();
    const server = await listen(handler);
    open.push(server);
    return server;
  }

  async function shop(prefix = '/api') {
    const service = await withProducts(shopService());
    const server = await start((app) => app.register(resourceryFastify, { service, prefix }));
    return { service, server };
  }

  describe('the service answers under the register prefix', () => {
    test('a request under the prefix reaches the resource, with the query language intact', async () => {
      const { server } = await shop();
      const res = await server.request('GET', '/api/Product/Price>10/order_asc=Price&select=Sku,Price');
      expect(res.status).toBe(200);
      expect(res.json().Data).toEqual([
        { Sku: 'H-3', Price: 18 },
        { Sku: 'S-7', Price: 25 },
      ]);
    });

    test('the prefix alone (with or without a slash) lists the available resources', async () => {
      const { server } = await shop();
      for (const path of ['/api', '/api/']) {
        const res = await server.request('GET', path, { headers: RAW });
        expect(res.json().map((r: { Name: string }) => r.Name)).toContain('Shop.Product');
      }
    });

    test('HEAD (no duplicated route) and REPORT pass through like any other method', async () => {
      const { server } = await shop();
      const head = await server.request('HEAD', '/api/Product/Sku=B-1');
      expect([head.status, head.text, head.headers.etag]).toEqual([200, '', expect.any(String)]);
      const report = await server.request('REPORT', '/api/Product/Price<20', { headers: RAW });
      expect([report.status, report.text]).toEqual([200, '2']);
    });

    test('the path reaches the core undecoded, so encoded & and / stay data', async () => {
      const { server } = await shop();
      const amp = await server.request('GET', '/api/Product/Name=Nuts%26Bolts/select=Sku', { headers: RAW });
      expect(amp.json()).toEqual([{ Sku: 'B-1' }]);
      const slash = await server.request('GET', '/api/Product/Name=Saw%201%2F2%22/select=Sku', { headers: RAW });
      expect(slash.json()).toEqual([{ Sku: 'S-7' }]);
    });

    test('without a prefix every path belongs to the service', async () => {
      const { server } = await shop('');
      const res = await server.request('GET', '/Shop.Product/Sku=H-3', { headers: RAW });
      expect(res.json()).toEqual([{ Sku: 'H-3', Name: 'Hammer', Price: 18 }]);
    });

    test("the app's own routes beside the prefix still answer, and its JSON parser still parses them", async () => {
      const service = await withProducts(shopService());
      const server = await start(async (app) => {
        await app.register(resourceryFastify, { service, prefix: '/api' });
        app.get('/health', async () => 'ok');
        app.post('/echo', async (request) => ({ got: request.body }));
      });
      expect((await server.request('GET', '/health')).text).toBe('ok');
      const echo = await server.request('POST', '/echo', { headers: JSON_HEADERS, body: '{"a":1}' });
      expect(echo.json()).toEqual({ got: { a: 1 } });
      expect((await server.request('GET', '/apis')).status).toBe(404);
    });
  });

  describe('error links carry the prefix', () => {
    test('ErrorInfo and MoreInfoAt start with the prefix and lead to the Error record of the full URI', async () => {
      const { server } = await shop();
      const res = await server.request('GET', '/api/Nowhere/Id=1');
      expect(res.status).toBe(404);
      expect(res.headers.errorinfo).toMatch(/^\/api\/Service\.Admin\.Error\/id=\S+$/);
      const record = await server.request('GET', res.headers.errorinfo as string);
      expect(record.json().Data[0]).toMatchObject({ ErrorCode: 'UnknownResource', Uri: '/api/Nowhere/Id=1' });
    });

    test('a plugin registered inside another prefix adds both; basePath replaces them in links', async () => {
      const service = shopService();
      const server = await start((app) =>
        app.register(
          async (v1) => {
            await v1.register(resourceryFastify, { service, prefix: '/api' });
            await v1.register(resourceryFastify, { service, prefix: '/proxied', basePath: '/svc/api/' });
          },
          { prefix: '/v1' },
        ),
      );
      expect((await server.request('GET', '/v1/api/Nowhere')).headers.errorinfo).toMatch(/^\/v1\/api\/Service\.Admin\.Error\/id=/);
      expect((await server.request('GET', '/v1/proxied/Nowhere')).headers.errorinfo).toMatch(/^\/svc\/api\/Service\.Admin\.Error\/id=/);
    });
  });

  describe('bodies are read by the service, not parsed by Fastify', () => {
    test('a POST stores the entity the client sent; bad JSON is the core error', async () => {
      const { server, service } = await shop();
      expect((await server.request('POST', '/api/Product', { headers: JSON_HEADERS, body: NEW_PRODUCT })).status).toBe(201);
      const stored = await service.handle({ method: 'GET', uri: '/Product/Sku=T-9', headers: RAW });
      expect(JSON.parse(stored.body as string)).toEqual([JSON.parse(NEW_PRODUCT)]);
      const bad = await server.request('POST', '/api/Product', { headers: JSON_HEADERS, body: '{"Sku":' });
      expect([bad.status, bad.json().ErrorCode]).toEqual([400, 'FailedJsonDeserialization']);
    });

    test('content types Fastify does not parse (text/plain, forms) reach the service as sent', async () => {
      const { server } = await shop();
      const plain = await server.request('POST', '/api/Product', { headers: { 'content-type': 'text/plain' }, body: NEW_PRODUCT });
      expect(plain.status).toBe(201);
      const form = await server.request('POST', '/api/Product', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'Sku=F-1',
      });
      expect([form.status, form.json().ErrorCode]).toEqual([415, 'UnsupportedContent']);
    });

    test('a POST without a body is 400 NoDataSource; PATCH and DELETE with conditions work', async () => {
      const { server } = await shop();
      const empty = await server.request('POST', '/api/Product', { headers: JSON_HEADERS, body: '' });
      expect([empty.status, empty.json().ErrorCode]).toEqual([400, 'NoDataSource']);
      const patch = await server.request('PATCH', '/api/Product/Sku=B-1', { headers: JSON_HEADERS, body: '{"Price":5}' });
      expect(patch.status).toBe(200);
      expect((await server.request('DELETE', '/api/Product/Sku=B-1')).status).toBe(200);
      expect((await server.request('REPORT', '/api/Product', { headers: RAW })).text).toBe('2');
    });
  });

  describe('streamed bodies are streamed, not buffered', () => {
    test('the first chunk arrives before the rest of the body exists', async () => {
      const lines = gatedLines();
      const service = await withProducts(shopService(lines.type));
      const server = await start((app) => app.register(resourceryFastify, { service, prefix: '/api' }));
      const stream = await firstChunk(server.port, '/api/Product', { accept: 'text/x-product-lines' });
      expect(stream.chunk).toBe('B-1\n');
      lines.release();
      expect(await stream.rest).toBe('S-7\nH-3\n');
      await lines.finished;
    });

    test('a binary resource streams its own bytes, whatever Accept asks; a client that leaves stops it', async () => {
      const service = shopService();
      const report = gatedBinary(service);
      const server = await start((app) => app.register(resourceryFastify, { service, prefix: '/api' }));
      const stream = await firstChunk(server.port, '/api/Report.Txt/Month=2026-11', { accept: 'application/json' });
      expect(stream.chunk).toBe('first\n');
      report.release();
      expect(await stream.rest).toBe('rest\n');
      await report.finished;
      const endlessService = shopService();
      const endless = gatedBinary(endlessService, { endless: true });
      const other = await start((app) => app.register(resourceryFastify, { service: endlessService }));
      const left = await firstChunk(other.port, '/Report.Txt', {});
      left.abort();
      endless.release();
      expect(await endless.stopped()).toBe('stopped');
    });

    test('a client that leaves mid-stream stops the producer', async () => {
      const lines = gatedLines({ endless: true });
      const service = await withProducts(shopService(lines.type));
      const server = await start((app) => app.register(resourceryFastify, { service }));
      const stream = await firstChunk(server.port, '/Product', { accept: 'text/x-product-lines' });
      stream.abort();
      lines.release();
      expect(await lines.stopped()).toBe('stopped');
      expect(lines.produced()).toBeGreaterThan(1);
    });
  });

  describe("the app's request reaches the service", () => {
    test('context(request) hands request.user, set by an onRequest hook of the app, to authenticate', async () => {
      const server = await start(async (app) => {
        app.decorateRequest('user', '');
        app.addHook('onRequest', async (request) => {
          (request as unknown as { user: unknown }).user = request.headers['x-user'];
        });
        await app.register(resourceryFastify, {
          service: userService(),
          prefix: '/api',
          context: (request) => ({ user: (request as unknown as { user?: string }).user }),
        });
      });
      expect((await server.request('GET', '/api/Product', { headers: { 'x-user': 'ann' } })).status).toBe(200);
      expect((await server.request('GET', '/api/Product')).status).toBe(401);
    });

    test('headers an earlier hook set on the reply (CORS-like) are kept', async () => {
      const service = await withProducts(shopService());
      const server = await start(async (app) => {
        app.addHook('onRequest', async (_request, reply) => {
          reply.header('x-served-by', 'fastify');
        });
        await app.register(resourceryFastify, { service, prefix: '/api' });
      });
      const res = await server.request('GET', '/api/Product', { headers: RAW });
      expect([res.status, res.headers['x-served-by']]).toEqual([200, 'fastify']);
    });

    test('a failure of the library itself (or of context) is a 500 logged on request.log, not a crash', async () => {
      class BrokenService extends Service {
        override handle(): Promise<PlainResponse> {
          return Promise.reject(new Error('broken pipeline'));
        }
      }
      const logged: string[] = [];
      const stream = { write: (line: string) => logged.push(JSON.parse(line).err?.message) };
      let handler!: http.RequestListener;
      const app = fastify({
        logger: { level: 'error', stream },
        serverFactory: (h) => {
          handler = h as http.RequestListener;
          return http.createServer(h);
        },
      });
      await app.register(resourceryFastify, { service: new BrokenService(), prefix: '/a' });
      await app.register(resourceryFastify, {
        service: shopService(),
        prefix: '/b',
        context: () => {
          throw new Error('no session');
        },
      });
      await app.ready();
      const server = await listen(handler);
      open.push(server);
      expect((await server.request('GET', '/a/Anything')).status).toBe(500);
      expect((await server.request('GET', '/b/Product')).status).toBe(500);
      expect((await server.request('GET', '/a')).status).toBe(500);
      expect(logged).toEqual(['broken pipeline', 'no session', 'broken pipeline']);
    });
  });
});
