import type { IncomingMessage, ServerResponse } from 'node:http';
import { normalizeBasePath, type Service } from '@resourcery/core';
import { stripBasePath, toPlainRequest } from '@resourcery/node';
import { parsedBody, serveRequest } from '@resourcery/node/internal';

export interface KoaMiddlewareOptions {
  /** Serve only requests under this path (`/api`); others go on to `next()`. Default: all. */
  prefix?: string;
  /**
   * The path that links (ErrorInfo, MoreInfoAt) start with. Default: the prefix. Set it
   * when a proxy in front strips a prefix, e.g. `/svc/api` for a proxy that forwards
   * `/svc/api/...` to `/api/...`.
   */
  basePath?: string;
  /** The app's per-request context (e.g. `(ctx) => ctx.state`), handed to authenticate, rules and hooks. */
  context?: (ctx: KoaContext) => unknown;
}

/** What the middleware reads from Koa's context (Koa 2 and 3, with or without a body parser). */
export interface KoaContext {
  url: string;
  req: IncomingMessage;
  res: ServerResponse;
  respond?: boolean;
  request: { body?: unknown; rawBody?: unknown };
  state?: Record<string, unknown>;
}
export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<void>;

/**
 * Koa 2 and 3 middleware: `app.use(createKoaMiddleware(service, { prefix: '/api' }))`.
 *
 * The response is written by the node bridge (`ctx.respond = false`), not handed to Koa
 * as `ctx.body`: Koa reinterprets bodies (a null body with status 200 becomes 204, or the
 * text `null` when the type is JSON; an untyped string gets a guessed Content-Type), while
 * the bridge sends exactly what the core answered, byte for byte as the node adapter does,
 * streams async bodies with back-pressure and stops them when the client leaves.
 * Headers set on ctx by earlier middleware (CORS...) are kept and ctx.status is right
 * once `await next()` returns; middleware that rewrites ctx.body afterwards (compression)
 * does not apply. Errors are answered by the core and never reach Koa's error handling;
 * only a failure of the library itself (handle() rejected) is thrown, for Koa's 500.
 */
export function createKoaMiddleware(service: Service, options: KoaMiddlewareOptions = {}): KoaMiddleware {
  const prefix = normalizeBasePath(options.prefix);
  const basePath = options.basePath === undefined ? prefix : normalizeBasePath(options.basePath);
  return async (ctx, next) => {
    const uri = stripBasePath(ctx.url, prefix);
    if (uri === undefined) {
      await next();
      return;
    }
    const plain = toPlainRequest(ctx.req, uri, basePath);
    if (plain.body !== null && ctx.req.readableEnded)
      plain.body = typeof ctx.request.rawBody === 'string' ? ctx.request.rawBody : parsedBody(ctx.request.body);
    // Set first: Koa must not write a response of its own after this middleware returns
    // (its error handling still answers a failure of the library itself).
    ctx.respond = false;
    const served = serveRequest(service, plain, options.context?.(ctx), ctx.res);
    if (served !== undefined) await served;
  };
}
