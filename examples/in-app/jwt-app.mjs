// Resourcery with JWT authentication on node:http: the orders of orders.mjs, callers
// identified by a Bearer token checked with jose (HS256 secret or an identity provider's JWKS).
//   pnpm build && JWT_SECRET=change-me node examples/in-app/jwt-app.mjs
//   JWKS_URL=https://idp.example/.well-known/jwks.json node examples/in-app/jwt-app.mjs
import { createServer } from '@resourcery/node';
import { jwtAuthenticate } from './jwt.mjs';
import { ordersService } from './orders.mjs';

const authenticate = jwtAuthenticate({ secret: process.env.JWT_SECRET, jwksUrl: process.env.JWKS_URL, issuer: process.env.JWT_ISSUER });
const server = createServer(ordersService(authenticate));
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`JWT app on http://127.0.0.1:${server.address().port}`);
});
process.on('SIGTERM', () => server.close());
