import type { AddressInfo } from 'node:net';
import { createServer } from '@resourcery/node';
import { eventStreamSuite } from './event-stream-suite';

describe('event streams through the node adapter', () => {
  eventStreamSuite(async (service, context) => {
    const server = createServer(service, { basePath: '/api', context });
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
