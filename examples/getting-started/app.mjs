// app.mjs (docs/getting-started.md): `node examples/getting-started/app.mjs` after `pnpm build`.
// PORT=0 picks a free port (the example's test does).
import { createService } from '@resourcery/core';
import { createServer } from '@resourcery/node';

const service = createService();

service.addResource({
  name: 'Person',
  description: 'People we know',
  schema: {
    type: 'object',
    properties: {
      Id: { type: 'integer' },
      Name: { type: 'string' },
      Age: { type: 'integer', minimum: 0 },
    },
    required: ['Id', 'Name'],
  },
});

const server = createServer(service).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${server.address().port}`),
);
const stop = () => server.close(() => void service.close());
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
