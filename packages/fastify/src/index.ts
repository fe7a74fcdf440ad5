import type { ServerResponse } from 'node:http';
import { normalizeBasePath, type Service } from '@resourcery/core';
import { stripBasePath, toPlainRequest } from '@resourcery/node';
import { serveRequest } from '@resourcery/node/internal';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

export interface ResourceryFastifyOptions {
  service: Service;
  /**
   * The path that links (ErrorInfo, MoreInfoAt) start with. Default: the register prefix.
   * Set it when a proxy in front strips a prefix, e.g. `/svc/api` for a proxy that forwards
   * `/svc/api/...` to `/api/...`.
   */
  basePath?: string;
  /** The app's per-request context (e.g. `(request) => ({ user: request.user })`), handed to authenticate, rules and hooks. */
  context?: (request: FastifyRequest, reply: FastifyReply) => unknown;
}

/** The methods the service answers; REPORT is not one of Fastify 5's own. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'REPORT'];

/**
 * Fastify 4 and 5 plugin: `app.register(resourceryFastify, { service, prefix: '/api' })`.
 *
 * Encapsulated (its content-type parsers stay inside it): bodies are not parsed by Fastify
 * but read by the service from the request stream, and the response is written by the
 * node bridge (`reply.hijack()`), byte for byte as the node adapter does, streamed with
 * back-pressure. Headers an earlier hook set on the reply (CORS...) are kept. Errors are
 * answered by the core; only a failure of the library itself is logged on request.log and
 * ends the response (a bare 500 when nothing was sent yet). Docs: docs/adapters/fastify.md.
 */
// eslint-disable-next-line @typescript-eslint/require-await -- Fastify runs a two-argument plugin as async: it must return a promise (a throw in it becomes its rejection)
export const resourceryFastify: FastifyPluginAsync<ResourceryFastifyOptions> = async (fastify, options) => {
  const { service, context } = options;
  const prefix = normalizeBasePath(fastify.prefix);
  const basePath = options.basePath === undefined ? prefix : normalizeBasePath(options.basePath);
  // Fastify 5 knows only the standard methods (Fastify 4 lists REPORT itself).
  const supported = (fastify as { supportedMethods?: string[] }).supportedMethods;
  if (supported && !supported.includes('REPORT')) fastify.addHttpMethod('REPORT');
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null));
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    const res = reply.hijack().raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
    let served: Promise<void> | undefined;
    try {
      const uri = stripBasePath(request.raw.url ?? '/', prefix) ?? '/';
      served = serveRequest(service, toPlainRequest(request.raw, uri, basePath), context?.(request, reply), res);
    } catch (error) {
      served = Promise.reject(error);
    }
    served?.catch((error: unknown) => failed(request, res, error));
  };
  // Both routes: Fastify's own HEAD for GET would collide with the service's HEAD.
  for (const url of ['/', '/*']) fastify.route({ method: METHODS, url, exposeHeadRoute: false, handler });
};

function failed(request: FastifyRequest, res: ServerResponse, error: unknown): void {
  request.log.error({ err: error }, 'resourcery: the request could not be served');
  if (res.headersSent) res.destroy();
  else res.writeHead(500).end();
}

export default resourceryFastify;
