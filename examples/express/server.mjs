// Resourcery as Express middleware, mounted at /api beside the app's own routes.
//   pnpm build && node examples/express/server.mjs
//   curl 'http://127.0.0.1:3000/api/Book/Year<1950/order_asc=Year'
//   curl 'http://127.0.0.1:3000/api/Book/Title=Dune'         # 204: nothing found
//   curl -i 'http://127.0.0.1:3000/api/Nowhere'              # 404; ErrorInfo links the error record
import express from 'express';
import { createService, MemoryStorage } from '@resourcery/core';
import { createExpressMiddleware } from '@resourcery/express';

const service = createService();
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
});

const app = express();
app.get('/health', (_req, res) => {
  res.json({ ok: true });
});
// The app's own JSON route with its own parser. A global app.use(express.json()) works
// too (the middleware falls back to req.body), but then Express, not the service,
// answers malformed JSON sent to /api.
app.post('/feedback', express.json(), (req, res) => {
  res.status(202).json({ received: req.body });
});
// Every request under /api is answered by the service, errors included: nothing
// reaches next(), so this is the last handler those requests see.
app.use('/api', createExpressMiddleware(service));

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`Books are served at http://127.0.0.1:${server.address().port}/api/Book`);
});

const stop = () => server.close(() => void service.close());
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
