// Resourcery on plain node:http, mounted at /api.
//   pnpm build && node examples/node-http/server.mjs
//   curl 'http://127.0.0.1:3000/api/Person/Age>30/order_asc=Name&select=Name,Age'
//   curl 'http://127.0.0.1:3000/api/Person-Adults'
//   curl -X POST -H 'Content-Type: application/json' -d '{"Id":4,"Name":"Ada","Age":36}' http://127.0.0.1:3000/api/Person
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';

const service = createService({
  // Open by default; API_KEYS=k1,k2 requires `Authorization: apikey <key>` on every request.
  apiKeys: (process.env.API_KEYS ?? '')
    .split(',')
    .filter(Boolean)
    .map((key) => ({ key })),
});

service.addResource({
  name: 'Person',
  description: 'People and their ages',
  schema: {
    type: 'object',
    properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: 'integer', minimum: 0 } },
    required: ['Id', 'Name'],
  },
  views: [{ name: 'Adults', description: 'Age 18 and over, by name', conditions: 'Age>=18', meta: 'order_asc=Name' }],
  storage: new MemoryStorage([
    { Id: 1, Name: 'Grace', Age: 85 },
    { Id: 2, Name: 'Alan', Age: 41 },
    { Id: 3, Name: 'Tim', Age: 12 },
  ]),
});

// Requests outside /api get a plain 404 from the listener.
const server = createServer(service, { basePath: '/api' });
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`People are served at http://127.0.0.1:${server.address().port}/api/Person`);
});

const stop = () => server.close(() => void service.close());
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
