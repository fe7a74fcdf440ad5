import { ServiceError } from '../errors.js';
import type { Method } from '../http/types.js';

/**
 * Who is calling: the app's own request context (from the adapter's `context` option or
 * `service.handle(request, { context })`) and the principal `authenticate` made of it.
 * Every hook and rule receives it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context and principal
export interface Caller<C = any, P = any> {
  context: C;
  /** What `authenticate` returned; undefined when the service has no authentication. */
  principal: P;
  /** The request's method (REPORT and HEAD as sent). */
  method: string;
}

/** What `authenticate` sees of a request: lower-case header names, repeated values joined. */
export interface CallerRequest {
  method: string;
  uri: string;
  headers: Readonly<Record<string, string>>;
}

/**
 * Turns a request (and the app's context) into a principal, or throws: a ServiceError
 * as it is, anything else becomes 401 NotAuthorized (a bad token is the caller's problem).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context
export type Authenticate<C = any, P = unknown> = (request: CallerRequest, context: C) => P | Promise<P>;

/** Options of `service.handle`. */
export interface HandleOptions<C = unknown> {
  /** The app's per-request context: a session, Express's `req.user`, Koa's `ctx.state`. */
  context?: C;
}

/** `service.fetch`'s options: `handle`'s, and where the service is mounted. */
export interface FetchOptions<C = unknown> extends HandleOptions<C> {
  /** The path the service is mounted at (`/api`); a request outside it is 404. */
  basePath?: string;
}

/** Runs an authenticator, awaiting only when it is asynchronous. */
export function runAuthenticate(authenticate: Authenticate, request: CallerRequest, context: unknown): unknown {
  try {
    const principal = authenticate(request, context);
    return principal instanceof Promise
      ? principal.catch((e) => {
          throw asUnauthorized(e);
        })
      : principal;
  } catch (e) {
    throw asUnauthorized(e);
  }
}

function asUnauthorized(e: unknown): ServiceError {
  if (ServiceError.is(e)) return e;
  return unauthorized('The credentials are not valid');
}

export function unauthorized(message: string): ServiceError {
  return new ServiceError('NotAuthorized', message, { headers: { 'www-authenticate': 'Basic realm="Service"' } });
}

/** The method a rule is asked about: REPORT and HEAD read like GET. */
export function ruleMethod(method: string): Method {
  return (method === 'REPORT' || method === 'HEAD' ? 'GET' : method) as Method;
}
