#!/usr/bin/env node
// The CLI's `serve` through Fastify, for the shared conformance kit (scripts/conformance.mjs):
//   node examples/fastify/conformance-server.mjs <data.json> --port N [--api-key K]... [--allow-private-destinations]
// Same arguments, same service over the data file (changes written back), same listening line.
import Fastify from 'fastify';
import { resourceryFastify } from '@resourcery/fastify';
// A relative path: examples/ does not depend on the CLI package (needs `pnpm build`).
import { createFileService, parseServeArgs, stopOnSignals, urlOf } from '../../packages/cli/dist/index.js';

const options = parseServeArgs(['serve', ...process.argv.slice(2)]);
const { service, store } = await createFileService(options);
const app = Fastify();
await app.register(resourceryFastify, { service });
await app.listen({ port: options.port, host: options.host });
stopOnSignals(app.server, service, store);
console.log(`Resourcery is serving ${options.file} at ${urlOf(app.server, options.host)}`);
