#!/usr/bin/env node
// The CLI's `serve` through Express, for the shared conformance kit (scripts/conformance.mjs):
//   node examples/express/conformance-server.mjs <data.json> --port N [--api-key K]... [--allow-private-destinations]
// Same arguments, same data file handling (FileStore writes changes back), same listening line.
import express from 'express';
import { createService } from '@resourcery/core';
import { createExpressMiddleware } from '@resourcery/express';
// A relative path: examples/ does not depend on the CLI package (needs `pnpm build`).
import { FileStore, parseServeArgs } from '../../packages/cli/dist/index.js';

const options = parseServeArgs(['serve', ...process.argv.slice(2)]);
const store = await FileStore.load(options.file);
const service = createService({
  apiKeys: options.apiKeys.map((key) => ({ key })),
  allowPrivateDestinations: options.allowPrivateDestinations,
});
for (const name of store.resources.keys()) service.addResource({ name, storage: store.storage(name) });

const app = express();
app.use(createExpressMiddleware(service));
const server = app.listen(options.port, options.host, () => {
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  console.log(`Resourcery is serving ${options.file} at http://${host}:${server.address().port}`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  void service.close().finally(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
