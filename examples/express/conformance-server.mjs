#!/usr/bin/env node
// The CLI's `serve` through Express, for the shared conformance kit (scripts/conformance.mjs):
//   node examples/express/conformance-server.mjs <data.json> --port N [--api-key K]... [--allow-private-destinations]
// Same arguments, same service over the data file (changes written back), same listening line.
import express from 'express';
import { createExpressMiddleware } from '@resourcery/express';
// A relative path: examples/ does not depend on the CLI package (needs `pnpm build`).
import { createFileService, parseServeArgs, stopOnSignals, urlOf } from '../../packages/cli/dist/index.js';

const options = parseServeArgs(['serve', ...process.argv.slice(2)]);
const { service, store } = await createFileService(options);
const app = express();
app.use(createExpressMiddleware(service));
const server = app.listen(options.port, options.host, () => {
  stopOnSignals(server, service, store);
  console.log(`Resourcery is serving ${options.file} at ${urlOf(server, options.host)}`);
});
