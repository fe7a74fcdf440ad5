// An access log with the app's own logger (pino), through the service's onRequest/onResponse
// hook pair (docs/operations.md): one JSON line per request, with a request id, the resource,
// the status and the durations.
//   pnpm build && node examples/pino-logging/server.mjs
//   curl 'http://127.0.0.1:3000/api/Person/Age>30'
import { randomUUID } from 'node:crypto';
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import pino from 'pino';

const logger = pino();

const service = createService({
  // What onRequest returns comes back to onResponse: here a child logger carrying the request id.
  onRequest: (request) => logger.child({ reqId: request.headers['x-request-id'] ?? randomUUID() }),
  onResponse: (response, log) =>
    log.info(
      {
        method: response.method,
        uri: response.uri,
        resource: response.resource,
        status: response.status,
        durationMs: Math.round(response.durationMs * 1000) / 1000,
        operationMs: response.operationMs === undefined ? undefined : Math.round(response.operationMs * 1000) / 1000,
      },
      'request',
    ),
});

service.addResource({
  name: 'Person',
  storage: new MemoryStorage([
    { Id: 1, Name: 'Grace', Age: 85 },
    { Id: 2, Name: 'Alan', Age: 41 },
  ]),
});

const port = Number(process.env.PORT ?? 3000);
const server = createServer(service, { basePath: '/api' }).listen(port, '127.0.0.1', () => {
  logger.info(`listening on http://127.0.0.1:${server.address().port}/api`);
});
process.once('SIGTERM', () => server.close(() => void service.close()));
