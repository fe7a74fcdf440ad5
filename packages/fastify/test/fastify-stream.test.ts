import type { AddressInfo } from 'node:net';
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import { resourceryFastify } from '@resourcery/fastify';
import { eventStreamSuite } from '../../node/test/event-stream-suite';

type Fastify = typeof fastify5;

describe.each([
  ['Fastify 5', fastify5],
  ['Fastify 4', fastify4 as unknown as Fastify],
])('event streams through %s', (_name, fastify) => {
  eventStreamSuite(async (service, context) => {
    const app = fastify();
    await app.register(resourceryFastify, { service, prefix: '/api', context: (request) => context(request.raw) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/api`,
      close: async () => {
        app.server.closeAllConnections();
        await app.close();
      },
    };
  });
});
