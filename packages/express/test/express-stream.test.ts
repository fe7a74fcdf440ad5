import type { AddressInfo } from 'node:net';
import compression from 'compression';
import express5 from 'express';
import express4 from 'express4';
import { createExpressMiddleware } from '@resourcery/express';
import { eventStreamSuite } from '../../node/test/event-stream-suite';

type Express = typeof express5;

describe.each([
  ['Express 5', express5],
  ['Express 4', express4 as Express],
])('event streams through %s behind the compression middleware', (_name, express) => {
  eventStreamSuite(async (service, context) => {
    const app = express();
    // Compression in front would hold messages back to fill its window: streams must pass it untouched.
    app.use(compression());
    app.use('/api', createExpressMiddleware(service, { context }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
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
