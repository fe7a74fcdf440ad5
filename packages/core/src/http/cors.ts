import { ServiceError } from '../errors.js';
import type { HeaderValue, PlainRequest, PlainResponse } from './types.js';

/**
 * Which other origins may call the service from a browser. Each entry of `origins` is an
 * exact origin (`https://app.example`), `'*'` (any origin) or `'local'` (pages served
 * from localhost, 127.0.0.1 or [::1] on any port: front-end dev servers).
 */
export interface CorsOptions {
  origins?: readonly string[];
  /** How long a browser may cache a preflight answer, in seconds (default 600). */
  maxAge?: number;
  /**
   * Host names the service answers to (`Host` header, any port; `'local'` = localhost,
   * 127.0.0.1, [::1]); others are 403. For a server on loopback: a page of another site
   * whose name was made to resolve to 127.0.0.1 (DNS rebinding) is same-origin for the
   * browser, so only the Host header tells it apart. Omitted: any host.
   */
  hosts?: readonly string[];
}

/** The CLI's default: dev servers on this machine, nobody else (docs/cli.md). */
const LOCAL_ORIGINS = ['local'] as const;

const LOCAL = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i;
const LOCAL_HOST = /^(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/i;
const METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, REPORT';
const ALLOWED_HEADERS = 'Accept, Authorization, Content-Type, If-Match, If-None-Match, Source, Destination, X-Resourcery-Uri';
/** Headers a page may read from a cross-origin response; the rest is hidden by the browser. */
const EXPOSED = 'ErrorInfo, ETag, Location, Content-Disposition, Allow, X-Total-Count';

/**
 * Cross-origin requests (CORS), answered before the pipeline: a preflight (OPTIONS with
 * Access-Control-Request-Method) from an allowed origin gets 204 without authentication;
 * responses to an allowed origin carry Access-Control-* headers. A write from a page of a
 * refused origin is 403 before it runs, because a browser sends some writes (form posts)
 * without asking first, and hiding the response would not undo the write.
 */
export class Cors {
  private readonly any: boolean;
  private readonly local: boolean;
  private readonly exact: Set<string>;
  private readonly maxAge: string;
  private readonly hosts?: { local: boolean; names: Set<string> };

  constructor(options: CorsOptions = {}) {
    const origins = options.origins ?? LOCAL_ORIGINS;
    for (const origin of origins) {
      if (typeof origin !== 'string' || (origin !== '*' && origin !== 'local' && !/^[a-z][a-z0-9+.-]*:\/\/[^/\s]+$/i.test(origin))) {
        throw new TypeError(
          `cors origin ${JSON.stringify(origin)} must be '*', 'local' or an origin such as 'https://app.example' (scheme and host, no path)`,
        );
      }
    }
    this.any = origins.includes('*');
    this.local = origins.includes('local');
    this.exact = new Set(origins.filter((o) => o !== '*' && o !== 'local').map((o) => o.toLowerCase()));
    this.maxAge = String(options.maxAge ?? 600);
    if (options.hosts) this.hosts = { local: options.hosts.includes('local'), names: new Set(options.hosts.map((h) => h.toLowerCase())) };
  }

  private servesHost(host: string | undefined): boolean {
    if (this.hosts === undefined || host === undefined) return true;
    return (this.hosts.local && LOCAL_HOST.test(host)) || this.hosts.names.has(host.toLowerCase().replace(/:\d+$/, ''));
  }

  allows(origin: string): boolean {
    return this.any || (this.local && LOCAL.test(origin)) || this.exact.has(origin.toLowerCase());
  }

  /**
   * Answers the request: `next` runs the pipeline; `refuse` turns an error into the
   * core's error response.
   */
  async handle(
    request: PlainRequest,
    next: () => Promise<PlainResponse>,
    refuse: (error: ServiceError) => Promise<PlainResponse>,
  ): Promise<PlainResponse> {
    const host = header(request.headers, 'host');
    if (!this.servesHost(host)) {
      return refuse(
        new ServiceError(
          'Forbidden',
          `Host '${host}' is not one this service answers to (a protection against DNS rebinding): add it to the cors hosts option (cors.hosts)`,
        ),
      );
    }
    const origin = header(request.headers, 'origin');
    if (origin === undefined || sameOrigin(origin, request.headers)) return next();
    const allowed = this.allows(origin);
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS' && header(request.headers, 'access-control-request-method') !== undefined) {
      if (!allowed) return refuse(refused(origin));
      return {
        status: 204,
        headers: {
          'access-control-allow-origin': origin,
          'access-control-allow-methods': METHODS,
          'access-control-allow-headers': header(request.headers, 'access-control-request-headers') ?? ALLOWED_HEADERS,
          'access-control-max-age': this.maxAge,
          vary: 'Origin, Access-Control-Request-Headers',
        },
        body: null,
      };
    }
    if (!allowed) return method === 'GET' || method === 'HEAD' ? next() : refuse(refused(origin));
    const response = await next();
    const headers: Record<string, string> = {};
    for (const name of Object.keys(response.headers)) headers[name] = response.headers[name];
    headers['access-control-allow-origin'] = origin;
    headers['access-control-expose-headers'] = EXPOSED;
    headers.vary = headers.vary ? `${headers.vary}, Origin` : 'Origin';
    return { status: response.status, headers, body: response.body };
  }
}

function refused(origin: string): ServiceError {
  return new ServiceError(
    'Forbidden',
    `Requests from pages served by ${origin} are not allowed: add the origin to the CORS configuration (cors.origins)`,
  );
}

/** A page served by this same host (an explorer page, a LAN address) is not cross-origin. */
function sameOrigin(origin: string, headers: PlainRequest['headers']): boolean {
  const host = header(headers, 'host');
  if (host === undefined) return false;
  const at = origin.indexOf('://');
  return at > 0 && origin.slice(at + 3).toLowerCase() === host.toLowerCase();
}

function header(headers: PlainRequest['headers'], name: string): string | undefined {
  if (headers === undefined) return undefined;
  let value: HeaderValue = headers[name];
  if (value === undefined) {
    for (const key of Object.keys(headers)) if (key.toLowerCase() === name) value = headers[key];
  }
  if (Array.isArray(value)) value = value[0];
  return value === undefined ? undefined : String(value);
}
