import Koa3 from 'koa';
import Koa2 from 'koa2';
import { bodyParser as koaBodyParser } from '@koa/bodyparser';
import legacyBodyParser from 'koa-bodyparser';
import { Service, type PlainResponse } from '@resourcery/core';
import { createKoaMiddleware } from '@resourcery/koa';
// The same shop data, streaming content type and raw-path client as the Express adapter's tests.
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

type Koa = typeof Koa3;
type Middleware = Koa3.Middleware;

const open: Listening[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function start(app: Koa3): Promise<Listening> {
  const server = await listen(app.callback());
  open.push(server);
  return server;
}

const RAW = { accept: 'application/json;raw=true' };
const JSON_HEADERS = { 'content-type': 'application/json' };
const NEW_PRODUCT = JSON.stringify({ Sku: 'T-9', Name: 'Tape', Price: 3 });

/** A body parser that keeps only the parsed value, as some hand-written ones do. */
const parsedOnly: Middleware = async (ctx, next) => {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  if (chunks.length) ctx.request.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  await next();
};

describe.each([
  ['Koa 3', Koa3],
  ['Koa 2', Koa2 as Koa],
])('%s', (_name, Koa) => {
  async function served(...middleware: Middleware[]): Promise<{ app: Koa3; server: Listening }> {
    const app = new Koa();
    app.silent = true;
    for (const m of middleware) app.use(m);
    return { app, server: await start(app) };
  }

  describe('the service answers under its prefix', () => {
    test('a request under the prefix reaches the resource, with the query language intact', async () => {
      const { server } = await served(createKoaMiddleware(await withProducts(shopService()), { prefix: '/api' }));
      const res = await server.request('GET', '/api/Product/Price>10/order_asc=Price&select=Sku,Price');
      expect(res.status).toBe(200);
      expect(res.json().Data).toEqual([
        { Sku: 'H-3', Price: 18 },
        { Sku: 'S-7', Price: 25 },
      ]);
    });

    test('the prefix alone lists the available resources; a trailing slash in the option is ignored', async () => {
      const { server } = await served(createKoaMiddleware(shopService(), { prefix: '/api/' }));
      const res = await server.request('GET', '/api', { headers: RAW });
      expect(res.json().map((r: { Name: string }) => r.Name)).toContain('Shop.Product');
    });

    test('the path reaches the core undecoded, so encoded & and / stay data', async () => {
      const { server } = await served(createKoaMiddleware(await withProducts(shopService()), { prefix: '/api' }));
      const amp = await server.request('GET', '/api/Product/Name=Nuts%26Bolts/select=Sku', { headers: RAW });
      expect(amp.json()).toEqual([{ Sku: 'B-1' }]);
      const slash = await server.request('GET', '/api/Product/Name=Saw%201%2F2%22/select=Sku', { headers: RAW });
      expect(slash.json()).toEqual([{ Sku: 'S-7' }]);
    });

    test('without a prefix, every path belongs to the service', async () => {
      const { server } = await served(createKoaMiddleware(await withProducts(shopService())));
      const res = await server.request('GET', '/Shop.Product/Sku=H-3', { headers: RAW });
      expect(res.json()).toEqual([{ Sku: 'H-3', Name: 'Hammer', Price: 18 }]);
    });

    test('a HEAD that finds entities stays 200 with no body (Koa would make it 204)', async () => {
      const { server } = await served(createKoaMiddleware(await withProducts(shopService()), { prefix: '/api' }));
      const head = await server.request('HEAD', '/api/Product/Sku=B-1');
      expect([head.status, head.text]).toEqual([200, '']);
      const report = await server.request('REPORT', '/api/Product/Price<20', { headers: RAW });
      expect(report.text).toBe('2');
    });
  });

  describe('requests outside the prefix go on to next()', () => {
    test("the app's own middleware answers paths outside the prefix, even ones that merely start with it", async () => {
      const app: Middleware = async (ctx) => {
        ctx.body = `app: ${ctx.path}`;
      };
      const { server } = await served(createKoaMiddleware(shopService(), { prefix: '/api' }), app);
      expect((await server.request('GET', '/health')).text).toBe('app: /health');
      expect((await server.request('GET', '/apis/Product')).text).toBe('app: /apis/Product');
      expect((await server.request('GET', '/api/Product')).status).toBe(204);
    });
  });

  describe('error links carry the prefix', () => {
    test('ErrorInfo and MoreInfoAt start with the prefix and lead to the Error record of the full URI', async () => {
      const { server } = await served(createKoaMiddleware(shopService(), { prefix: '/api' }));
      const res = await server.request('GET', '/api/Nowhere/Id=1');
      expect(res.status).toBe(404);
      expect(res.headers.errorinfo).toMatch(/^\/api\/Service\.Admin\.Error\/id=\S+$/);
      expect(res.json().MoreInfoAt).toBe(res.headers.errorinfo);
      const record = await server.request('GET', res.headers.errorinfo as string);
      expect(record.json().Data[0]).toMatchObject({ ErrorCode: 'UnknownResource', Uri: '/api/Nowhere/Id=1' });
    });

    test('the basePath option replaces the prefix in links, for proxies that strip a prefix', async () => {
      const { server } = await served(createKoaMiddleware(shopService(), { prefix: '/api', basePath: '/svc/api' }));
      const res = await server.request('GET', '/api/Nowhere');
      expect(res.headers.errorinfo).toMatch(/^\/svc\/api\/Service\.Admin\.Error\/id=/);
    });
  });

  describe("errors are answered by the core and never reach Koa's error handling", () => {
    test('client mistakes get the core error body; nothing is thrown upstream and no error event fires', async () => {
      const seen: string[] = [];
      const upstream: Middleware = async (ctx, next) => {
        try {
          await next();
          seen.push(`status ${ctx.status}`);
        } catch {
          seen.push('thrown');
        }
      };
      const { app, server } = await served(upstream, createKoaMiddleware(await withProducts(shopService())));
      app.on('error', () => seen.push('error event'));
      const bad = await server.request('GET', '/Product/Price~3');
      expect(bad.status).toBe(400);
      expect(bad.json()).toMatchObject({ Status: 'fail', ErrorCode: 'InvalidConditionOperator' });
      const method = await server.request('PUT', '/Service.Admin.Protocol', { headers: JSON_HEADERS, body: '{}' });
      expect([method.status, method.headers.allow]).toEqual([405, 'GET, REPORT, HEAD']);
      expect(seen).toEqual(['status 400', 'status 405']);
    });

    test("only a failure of the library itself is thrown, and Koa's error handling answers it", async () => {
      class BrokenService extends Service {
        override handle(): Promise<PlainResponse> {
          return Promise.reject(new Error('broken pipeline'));
        }
      }
      const logged: string[] = [];
      const { app, server } = await served(createKoaMiddleware(new BrokenService()));
      app.on('error', (err: Error) => logged.push(err.message));
      expect((await server.request('GET', '/Anything')).status).toBe(500);
      expect(logged).toEqual(['broken pipeline']);
    });
  });

  describe('bodies reach the service with or without a body parser in front', () => {
    const parsers: Array<[string, () => Middleware]> = [
      [
        'no body parser',
        () => async (_ctx, next) => {
          await next();
        },
      ],
      ['@koa/bodyparser', () => koaBodyParser()],
      ['koa-bodyparser', () => legacyBodyParser()],
      ['a parser that keeps only the parsed value', () => parsedOnly],
    ];

    test.each(parsers)('with %s, a POST stores the entity the client sent', async (_label, parser) => {
      const service = shopService();
      const { server } = await served(parser(), createKoaMiddleware(service, { prefix: '/api' }));
      const res = await server.request('POST', '/api/Product', { headers: JSON_HEADERS, body: NEW_PRODUCT });
      expect(res.status).toBe(201);
      const stored = await service.handle({ method: 'GET', uri: '/Product/Sku=T-9', headers: RAW });
      expect(JSON.parse(stored.body as string)).toEqual([JSON.parse(NEW_PRODUCT)]);
    });

    test.each(parsers)('with %s, a POST without a body is 400 NoDataSource, not an empty entity', async (_label, parser) => {
      const service = shopService();
      const { server } = await served(parser(), createKoaMiddleware(service));
      const res = await server.request('POST', '/Product', { headers: JSON_HEADERS, body: '' });
      expect([res.status, res.json().ErrorCode]).toEqual([400, 'NoDataSource']);
    });

    test('a parsed form is still a form to the service: 415', async () => {
      const service = shopService();
      const { server } = await served(koaBodyParser(), createKoaMiddleware(service));
      const res = await server.request('POST', '/Product', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'Sku=F-1',
      });
      expect([res.status, res.json().ErrorCode]).toEqual([415, 'UnsupportedContent']);
    });
  });

  describe('streamed bodies are streamed, not buffered', () => {
    test('the first chunk arrives before the rest of the body exists', async () => {
      const lines = gatedLines();
      const { server } = await served(createKoaMiddleware(await withProducts(shopService(lines.type)), { prefix: '/api' }));
      const stream = await firstChunk(server.port, '/api/Product', { accept: 'text/x-product-lines' });
      expect(stream.chunk).toBe('B-1\n');
      lines.release();
      expect(await stream.rest).toBe('S-7\nH-3\n');
      await lines.finished;
    });

    test('a binary resource streams its own bytes, whatever Accept asks; a client that leaves stops it', async () => {
      const service = shopService();
      const report = gatedBinary(service);
      const { server } = await served(createKoaMiddleware(service, { prefix: '/api' }));
      const stream = await firstChunk(server.port, '/api/Report.Txt/Month=2026-11', { accept: 'application/json' });
      expect(stream.chunk).toBe('first\n');
      report.release();
      expect(await stream.rest).toBe('rest\n');
      await report.finished;
      const endlessService = shopService();
      const endless = gatedBinary(endlessService, { endless: true });
      const { server: other } = await served(createKoaMiddleware(endlessService));
      const left = await firstChunk(other.port, '/Report.Txt', {});
      left.abort();
      endless.release();
      expect(await endless.stopped()).toBe('stopped');
    });

    test('a client that leaves mid-stream stops the producer', async () => {
      const lines = gatedLines({ endless: true });
      const { server } = await served(createKoaMiddleware(await withProducts(shopService(lines.type))));
      const stream = await firstChunk(server.port, '/Product', { accept: 'text/x-product-lines' });
      stream.abort();
      lines.release();
      expect(await lines.stopped()).toBe('stopped');
      // It stopped because the client left: an endless body never ends by itself.
      expect(lines.produced()).toBeGreaterThan(1);
    });

    test('upstream middleware sees the status once the streamed response is complete', async () => {
      const lines = gatedLines();
      lines.release();
      let status = 0;
      const logger: Middleware = async (ctx, next) => {
        await next();
        status = ctx.status;
      };
      const { server } = await served(logger, createKoaMiddleware(await withProducts(shopService(lines.type))));
      const res = await server.request('GET', '/Product', { headers: { accept: 'text/x-product-lines' } });
      expect([res.status, res.text, status]).toEqual([200, 'B-1\nS-7\nH-3\n', 200]);
    });
  });

  describe("the context option hands the app's per-request context to the service", () => {
    test('authenticate sees what context(ctx) returned from ctx.state', async () => {
      const login: Middleware = async (ctx, next) => {
        ctx.state.user = ctx.get('x-user') || undefined;
        await next();
      };
      const { server } = await served(login, createKoaMiddleware(userService(), { prefix: '/api', context: (ctx) => ctx.state }));
      expect((await server.request('GET', '/api/Product', { headers: { 'x-user': 'ann' } })).status).toBe(200);
      expect((await server.request('GET', '/api/Product')).status).toBe(401);
    });
  });
});
