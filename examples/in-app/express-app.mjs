// Resourcery inside an Express app: the app's own login middleware sets req.user, the
// `context` option hands it to the service, and the rules and hooks of orders.mjs use it.
//   pnpm build && node examples/in-app/express-app.mjs
//   curl -H 'x-session: ann-session' 'http://127.0.0.1:3000/api/Order'      # ann's orders only
//   curl 'http://127.0.0.1:3000/api/Order'                                   # 401
import express from 'express';
import { createExpressMiddleware } from '@resourcery/express';
import { fromContext, ordersService, sessionUser } from './orders.mjs';

const app = express();
app.use((req, _res, next) => {
  req.user = sessionUser(req.get('x-session'));
  next();
});
app.use('/api', createExpressMiddleware(ordersService(fromContext), { context: (req) => ({ user: req.user }) }));

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`Express app on http://127.0.0.1:${server.address().port}/api`);
});
process.on('SIGTERM', () => server.close());
