import express5 from 'express';
import express4 from 'express4';
import { Service, type PlainResponse } from '@resourcery/core';
import { createExpressMiddleware } from '@resourcery/express';
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

type Express = typeof express5;

const open: Listening[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function start(app: ReturnType<Express>): Promise<Listening> {
  const server = await listen(app);
  open.push(server);
  return server;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const NEW_PRODUCT = JSON.stringify({ Sku: 'T-9', Name: 'Tape', Price: 3 });

describe.each([
  ['Express 5', express5],
  ['Express 4', express4 as Express],
])('%s', (_name, express) => {
  async function mounted(setup: (app: ReturnType<Express>, mw: ReturnType<typeof createExpressMiddleware>) => void) {
    const service = await withProducts(shopService());
    const app = express();
    setup(app, createExpressMiddleware(service));
    return { service, server: await start(app) };
  }

  describe('the service answers at the path it is mounted on', () => {
    test('a request under the mount path reaches the resource, with the query language intact', async () => {
      const { server } = await mounted((app, mw) => app.use('/api', mw));
      const res = await server.request('GET', '/api/Product/Price>10/order_asc=Price&select=Sku,Price');
      expect(res.status).toBe(200);
      expect(res.json().Data).toEqual([
        { Sku: 'H-3', Price: 18 },
        { Sku: 'S-7', Price: 25 },
      ]);
    });

    test('the mount path alone lists the available resources', async () => {
      const { server } = await mounted((app, mw) => app.use('/api', mw));
      const res = await server.request('GET', '/api', { headers: { accept: 'application/json;raw=true' } });
      expect(res.status).toBe(200);
      expect(res.json().map((r: { Name: string }) => r.Name)).toContain('Shop.Product');
    });

    test('HEAD and REPORT pass through like any other method', async () => {
      const { server } = await mounted((app, mw) => app.use('/api', mw));
      const head = await server.request('HEAD', '/api/Product/Sku=B-1');
      expect([head.status, head.text]).toEqual([200, '']);
      const report = await server.request('REPORT', '/api/Product/Price<20', { headers: { accept: 'application/json;raw=true' } });
      expect(report.text).toBe('2');
    });

    test('the path reaches the core undecoded, so encoded & and / stay data', async () => {
      const { server } = await mounted((app, mw) => app.use('/api', mw));
      const amp = await server.request('GET', '/api/Product/Name=Nuts%26Bolts/select=Sku', {
        headers: { accept: 'application/json;raw=true' },
      });
      expect(amp.json()).toEqual([{ Sku: 'B-1' }]);
      const slash = await server.request('GET', '/api/Product/Name=Saw%201%2F2%22/select=Sku', {
        headers: { accept: 'application/json;raw=true' },
      });
      expect(slash.json()).toEqual([{ Sku: 'S-7' }]);
    });

    test('mounted at the root, every path belongs to the service', async () => {
      const { server } = await mounted((app, mw) => app.use(mw));
      const res = await server.request('GET', '/Shop.Product/Sku=H-3', { headers: { accept: 'application/json;raw=true' } });
      expect(res.json()).toEqual([{ Sku: 'H-3', Name: 'Hammer', Price: 18 }]);
    });
  });

  describe('error links carry the mount path', () => {
    test('ErrorInfo and MoreInfoAt start with the mount path and lead to the Error record of the full URI', async () => {
      const { server } = await mounted((app, mw) => app.use('/api', mw));
      const res = await server.request('GET', '/api/Nowhere/Id=1');
      expect(res.status).toBe(404);
      expect(res.headers.errorinfo).toMatch(/^\/api\/Service\.Admin\.Error\/id=\S+$/);
      expect(res.json().MoreInfoAt).toBe(res.headers.errorinfo);
      const record = await server.request('GET', res.headers.errorinfo as string);
      expect(record.json().Data[0]).toMatchObject({ ErrorCode: 'UnknownResource', Uri: '/api/Nowhere/Id=1' });
    });

    test('a router mounted inside another router adds both paths', async () => {
      const { server } = await mounted((app, mw) => {
        const v1 = express.Router();
        v1.use('/api', mw);
        app.use('/v1', v1);
      });
      const res = await server.request('GET', '/v1/api/Nowhere');
      expect(res.headers.errorinfo).toMatch(/^\/v1\/api\/Service\.Admin\.Error\/id=/);
    });

    test('the basePath option (trailing slash ignored) replaces the mount path in links, for proxies that strip a prefix', async () => {
      const service = shopService();
      const app = express();
      app.use('/api', createExpressMiddleware(service, { basePath: '/svc/api/' }));
      const server = await start(app);
      const res = await server.request('GET', '/api/Nowhere');
      expect(res.headers.errorinfo).toMatch(/^\/svc\/api\/Service\.Admin\.Error\/id=/);
    });
  });

  describe('requests outside the mount path go on to the app', () => {
    test('routes declared after the middleware still answer their own paths', async () => {
      const { server } = await mounted((app, mw) => {
        app.use('/api', mw);
        app.get('/health', (_req, res) => {
          res.send('ok');
        });
        app.get('/apis', (_req, res) => {
          res.send('not the service');
        });
      });
      expect((await server.request('GET', '/health')).text).toBe('ok');
      expect((await server.request('GET', '/apis')).text).toBe('not the service');
    });
  });

  describe('errors are answered by the core and never passed to next()', () => {
    test('client mistakes get the core error body while later handlers stay untouched', async () => {
      const reached: string[] = [];
      const { server } = await mounted((app, mw) => {
        app.use('/api', mw);
        app.use((_req, res) => {
          reached.push('fallback');
          res.status(418).end();
        });
        app.use((_err: unknown, _req: unknown, res: { status(n: number): { end(): void } }, _next: unknown) => {
          reached.push('error handler');
          res.status(500).end();
        });
      });
      const bad = await server.request('GET', '/api/Product/Price~3');
      expect(bad.status).toBe(400);
      expect(bad.json()).toMatchObject({ Status: 'fail', ErrorCode: 'InvalidConditionOperator' });
      const json = await server.request('POST', '/api/Product', { headers: JSON_HEADERS, body: '{"Sku":' });
      expect(json.json().ErrorCode).toBe('FailedJsonDeserialization');
      const method = await server.request('PUT', '/api/Service.Admin.Protocol', { headers: JSON_HEADERS, body: '{}' });
      expect([method.status, method.headers.allow]).toEqual([405, 'GET, REPORT, HEAD']);
      expect(reached).toEqual([]);
    });

    test('only a failure of the library itself goes to next(error), for the app to log', async () => {
      class BrokenService extends Service {
        override handle(): Promise<PlainResponse> {
          return Promise.reject(new Error('broken pipeline'));
        }
      }
      const logged: string[] = [];
      const app = express();
      app.use(createExpressMiddleware(new BrokenService()));
      app.use((err: Error, _req: unknown, res: { status(n: number): { end(): void } }, _next: unknown) => {
        logged.push(err.message);
        res.status(500).end();
      });
      const server = await start(app);
      expect((await server.request('GET', '/Anything')).status).toBe(500);
      expect(logged).toEqual(['broken pipeline']);
    });
  });

  describe('bodies reach the service with or without a body parser in front', () => {
    const parsers: Array<[string, () => express5.RequestHandler]> = [
      ['no body parser', () => (_req, _res, next) => next()],
      ['express.json()', () => express.json()],
      ['express.raw()', () => express.raw({ type: '*/*' })],
      ['express.text()', () => express.text({ type: '*/*' })],
    ];

    test.each(parsers)('with %s, a POST stores the entity the client sent', async (_label, parser) => {
      const { server, service } = await mounted((app, mw) => app.use(parser(), mw));
      const res = await server.request('POST', '/Product', { headers: JSON_HEADERS, body: NEW_PRODUCT });
      expect(res.status).toBe(201);
      const stored = await service.handle({ method: 'GET', uri: '/Product/Sku=T-9', headers: { accept: 'application/json;raw=true' } });
      expect(JSON.parse(stored.body as string)).toEqual([JSON.parse(NEW_PRODUCT)]);
    });

    test.each(parsers)('with %s, a POST without a body is 400 NoDataSource, not an empty entity', async (_label, parser) => {
      const { server } = await mounted((app, mw) => app.use(parser(), mw));
      const res = await server.request('POST', '/Product', { headers: JSON_HEADERS, body: '' });
      expect([res.status, res.json().ErrorCode]).toEqual([400, 'NoDataSource']);
    });

    test('a parser that skips the content type leaves the stream for the service to read', async () => {
      const { server } = await mounted((app, mw) => app.use(express.json(), mw));
      // text/plain is a JSON binding of the core, but not a type express.json() parses.
      const res = await server.request('POST', '/Product', { headers: { 'content-type': 'text/plain' }, body: NEW_PRODUCT });
      expect(res.status).toBe(201);
    });

    test('a form parsed by express.urlencoded() is still a form to the service: 415', async () => {
      const { server } = await mounted((app, mw) => app.use(express.urlencoded({ extended: false }), mw));
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
      const service = await withProducts(shopService(lines.type));
      const app = express();
      app.use('/api', createExpressMiddleware(service));
      const server = await start(app);
      const stream = await firstChunk(server.port, '/api/Product', { accept: 'text/x-product-lines' });
      expect(stream.chunk).toBe('B-1\n');
      lines.release();
      expect(await stream.rest).toBe('S-7\nH-3\n');
      await lines.finished;
    });

    test('a binary resource streams its own bytes, whatever Accept asks; a client that leaves stops it', async () => {
      const service = shopService();
      const report = gatedBinary(service);
      const app = express();
      app.use('/api', createExpressMiddleware(service));
      const server = await start(app);
      const stream = await firstChunk(server.port, '/api/Report.Txt/Month=2026-11', { accept: 'application/json' });
      expect(stream.chunk).toBe('first\n');
      report.release();
      expect(await stream.rest).toBe('rest\n');
      await report.finished;
      const endlessService = shopService();
      const endless = gatedBinary(endlessService, { endless: true });
      const app2 = express();
      app2.use(createExpressMiddleware(endlessService));
      const left = await firstChunk((await start(app2)).port, '/Report.Txt', {});
      left.abort();
      endless.release();
      expect(await endless.stopped()).toBe('stopped');
    });

    test('a client that leaves mid-stream stops the producer', async () => {
      const lines = gatedLines({ endless: true });
      const service = await withProducts(shopService(lines.type));
      const app = express();
      app.use(createExpressMiddleware(service));
      const server = await start(app);
      const stream = await firstChunk(server.port, '/Product', { accept: 'text/x-product-lines' });
      stream.abort();
      lines.release();
      expect(await lines.stopped()).toBe('stopped');
      // It stopped because the client left: an endless body never ends by itself.
      expect(lines.produced()).toBeGreaterThan(1);
    });
  });

  describe("the context option hands the app's per-request context to the service", () => {
    test('authenticate sees what context(req, res) returned from req.user', async () => {
      const app = express();
      app.use((req: any, _res: unknown, next: () => void) => {
        req.user = req.headers['x-user'];
        next();
      });
      app.use('/api', createExpressMiddleware(userService(), { context: (req) => ({ user: (req as { user?: string }).user }) }));
      const server = await start(app);
      expect((await server.request('GET', '/api/Product', { headers: { 'x-user': 'ann' } })).status).toBe(200);
      expect((await server.request('GET', '/api/Product')).status).toBe(401);
    });
  });
});
