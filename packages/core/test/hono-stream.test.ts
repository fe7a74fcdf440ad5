import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { eventStreamSuite } from '../../node/test/event-stream-suite';

/** Event streams through service.fetch under Hono (@hono/node-server), as docs/adapters/fetch.md mounts it. */
describe('event streams through service.fetch under Hono', () => {
  eventStreamSuite(async (service, context) => {
    const app = new Hono<{ Bindings: { incoming: IncomingMessage } }>();
    // The app's session middleware would read the cookie; the suite's reads it from the node request.
    app.all('/api/*', (c) => service.fetch(c.req.raw, { basePath: '/api', context: context(c.env.incoming) }));
    const server = await new Promise<ServerType>((resolve) => {
      const s: ServerType = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/api`,
      close: () =>
        new Promise<void>((resolve) => {
          (server as unknown as { closeAllConnections(): void }).closeAllConnections();
          server.close(() => resolve());
        }),
    };
  });
});
