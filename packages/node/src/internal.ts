/**
 * `@resourcery/node/internal`: what the Express, Koa and Fastify adapters share with the
 * bridge; not a public API (no semver promise). Apps use `@resourcery/node`.
 */
export { parsedBody, serveRequest } from './bridge.js';
