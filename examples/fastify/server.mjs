// Resourcery as a Fastify plugin, registered at /api beside the app's own routes.
//   pnpm build && node examples/fastify/server.mjs
//   curl 'http://127.0.0.1:3000/api/Book/Year<1950/order_asc=Year'
//   curl -X REPORT 'http://127.0.0.1:3000/api/Book/Year<1950'  # how many
//   curl -i 'http://127.0.0.1:3000/api/Nowhere'              # 404; ErrorInfo links the error record
import Fastify from 'fastify';
import { createService, MemoryStorage } from '@resourcery/core';
import { resourceryFastify } from '@resourcery/fastify';

const service = createService({
  // The app's user (set by the onRequest hook below) reaches rules and hooks through context.
  authenticate: (_request, context) => ({ user: context?.user ?? 'guest' }),
});
service.addResource({
  name: 'Library.Book',
  description: 'Books on the shelf; also reachable as /Book',
  schema: {
    type: 'object',
    properties: { Isbn: { type: 'string' }, Title: { type: 'string' }, Year: { type: 'integer' } },
    required: ['Isbn', 'Title'],
  },
  storage: new MemoryStorage([
    { Isbn: '978-0-14-118776-1', Title: 'Nineteen Eighty-Four', Year: 1949 },
    { Isbn: '978-0-06-085052-4', Title: 'Brave New World', Year: 1932 },
    { Isbn: '978-0-345-39180-3', Title: 'Neuromancer', Year: 1984 },
  ]),
  // Guests read; only a named user writes.
  rules: { allow: (caller, method) => method === 'GET' || caller.principal.user !== 'guest' },
});

const app = Fastify();
app.decorateRequest('user', null);
app.addHook('onRequest', async (request) => {
  // Stands in for the app's real authentication (a session, a JWT plugin).
  request.user = request.headers['x-user'] ?? null;
});
app.get('/health', async () => ({ ok: true }));
// The app's own JSON route keeps Fastify's JSON parser: the plugin's parsers stay inside it.
app.post('/feedback', async (request, reply) => reply.code(202).send({ received: request.body }));
// Every request under /api is answered by the service, errors included.
await app.register(resourceryFastify, { service, prefix: '/api', context: (request) => ({ user: request.user }) });

const host = '127.0.0.1';
await app.listen({ port: Number(process.env.PORT ?? 3000), host });
console.log(`Books are served at http://${host}:${app.server.address().port}/api/Book`);

const stop = () => app.close().then(() => service.close());
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
