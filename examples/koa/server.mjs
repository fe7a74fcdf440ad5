// Resourcery as Koa middleware under the prefix /api, between the app's own middleware.
//   pnpm build && node examples/koa/server.mjs
//   curl 'http://127.0.0.1:3000/api/Album/Year>1970/select=Title,Year'
//   curl -X PATCH -H 'Content-Type: application/json' -d '{"Year":1973}' \
//        'http://127.0.0.1:3000/api/Album/Title=The%20Dark%20Side%20of%20the%20Moon'
import Koa from 'koa';
import { createService, MemoryStorage } from '@resourcery/core';
import { createKoaMiddleware } from '@resourcery/koa';

const service = createService();
service.addResource({
  name: 'Music.Album',
  schema: {
    type: 'object',
    properties: { Title: { type: 'string' }, Artist: { type: 'string' }, Year: { type: 'integer' } },
    required: ['Title'],
  },
  storage: new MemoryStorage([
    { Title: 'Kind of Blue', Artist: 'Miles Davis', Year: 1959 },
    { Title: 'The Dark Side of the Moon', Artist: 'Pink Floyd', Year: 1972 },
    { Title: 'Blue Train', Artist: 'John Coltrane', Year: 1958 },
  ]),
});

const app = new Koa();
// Upstream middleware sees the service's status once `await next()` returns.
app.use(async (ctx, next) => {
  const started = performance.now();
  await next();
  console.log(`${ctx.method} ${ctx.url} ${ctx.status} ${(performance.now() - started).toFixed(1)} ms`);
});
app.use(createKoaMiddleware(service, { prefix: '/api' }));
// Requests outside /api go on to the app's own middleware.
app.use((ctx) => {
  if (ctx.path === '/health') ctx.body = { ok: true };
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`Albums are served at http://127.0.0.1:${server.address().port}/api/Album`);
});

const stop = () => server.close(() => void service.close());
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
