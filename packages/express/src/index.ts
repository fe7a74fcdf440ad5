import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '@resourcery/core';
import { toPlainRequest } from '@resourcery/node';
import { parsedBody, serveRequest } from '@resourcery/node/internal';

export interface ExpressMiddlewareOptions {
  /**
   * The path that links (ErrorInfo, MoreInfoAt) start with. Default: where Express
   * mounted the middleware (`req.baseUrl`). Set it when a proxy in front strips a
   * prefix, e.g. `/svc/api` for a proxy that forwards `/svc/api/...` to `/api/...`.
   */
  basePath?: string;
  /** The app's per-request context (e.g. `(req) => ({ user: req.user })`), handed to authenticate, rules and hooks. */
  context?: (req: ExpressRequest, res: ServerResponse) => unknown;
}

/** What the middleware reads from Express's request: node's IncomingMessage plus two fields. */
export type ExpressRequest = IncomingMessage & { baseUrl?: string; body?: unknown };
export type ExpressNext = (error?: unknown) => void;
export type ExpressMiddleware = (req: ExpressRequest, res: ServerResponse, next: ExpressNext) => void;

/**
 * Express 4 and 5 middleware serving the service wherever it is mounted:
 * `app.use('/api', createExpressMiddleware(service))`.
 *
 * Every request that reaches it is answered by the service, errors included (the core
 * formats them and records them), so `next` is never called for a request; only a
 * failure of the library itself (handle() rejected, or the response could not be
 * started) goes to `next(error)`, for the app's error handler to log.
 */
export function createExpressMiddleware(service: Service, options: ExpressMiddlewareOptions = {}): ExpressMiddleware {
  return (req, res, next) => {
    // Inside a mounted middleware Express has cut req.baseUrl off req.url; both stay undecoded.
    const plain = toPlainRequest(req, req.url || '/', options.basePath ?? req.baseUrl ?? '');
    if (plain.body !== null && req.readableEnded) plain.body = parsedBody(req.body);
    serveRequest(service, plain, options.context?.(req, res), res)?.catch(next);
  };
}
