// Resourcery inside a Koa app: the app's login middleware sets ctx.state.user, the
// `context` option hands ctx.state to the service, and the rules and hooks of orders.mjs use it.
//   pnpm build && node examples/in-app/koa-app.mjs
//   curl -H 'x-session: bob-session' 'http://127.0.0.1:3000/api/Order'      # bob's orders only
import Koa from 'koa';
import { createKoaMiddleware } from '@resourcery/koa';
import { fromContext, ordersService, sessionUser } from './orders.mjs';

const app = new Koa();
app.use(async (ctx, next) => {
  ctx.state.user = sessionUser(ctx.get('x-session'));
  await next();
});
app.use(createKoaMiddleware(ordersService(fromContext), { prefix: '/api', context: (ctx) => ctx.state }));

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`Koa app on http://127.0.0.1:${server.address().port}/api`);
});
process.on('SIGTERM', () => server.close());
