import type { AddressInfo } from 'node:net';
import http from 'node:http';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import { createKoaMiddleware } from '@resourcery/koa';
import { eventStreamSuite } from '../../node/test/event-stream-suite';

type Koa = typeof Koa3;

describe.each([
  ['Koa 3', Koa3],
  ['Koa 2', Koa2 as Koa],
])('event streams through %s', (_name, Koa) => {
  eventStreamSuite(async (service, context) => {
    const app = new Koa();
    app.use(createKoaMiddleware(service, { prefix: '/api', context: (ctx) => context(ctx.req) }));
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/api`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  });
});
