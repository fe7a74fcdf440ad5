import { ServiceError } from '@resourcery/core';

/**
 * A database that cannot serve now (down, restarting, failing over, out of connections)
 * is not a bug in the request: 503 ServiceUnavailable with Retry-After, and a message that
 * says what happened without the connection string (docs/errors.md).
 */

/** Seconds a client is told to wait (Retry-After) before it tries again. */
const RETRY_AFTER_SECONDS = 5;

/** Node's socket errors of a server that is not there or went away. */
const SOCKET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** pg's own words for a connection lost or never made, and PGlite's once closed. */
const LOST =
  /Connection terminated|timeout exceeded when trying to connect|is not queryable|Client was closed|connection error|Connection ended|PGlite is closed/i;

/** What happened, in words; undefined when the error is no database outage. */
function outage(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const raw = (e as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  if (code === 'ECONNREFUSED') return 'it refuses connections';
  if (SOCKET.has(code)) return 'the connection to it failed';
  // SQLSTATE class 08: connection exception; 57P01-57P03: shutting down, crashed, starting;
  // 53300: too many connections; 25006: read only (a standby, while a failover completes).
  if (code.startsWith('08')) return 'the connection to it failed';
  if (code === '57P01' || code === '57P02') return 'it is shutting down';
  if (code === '57P03') return 'it is starting up';
  if (code === '53300') return 'it has no connection slot left';
  if (code === '25006') return 'it accepts no writes now (a standby, failover in progress)';
  if (e instanceof Error && LOST.test(e.message)) return 'the connection to it was lost';
  return undefined;
}

/** The 503 for a database outage, or null when `e` is something else. */
export function unavailable(e: unknown): ServiceError | null {
  if (ServiceError.is(e)) return e.code === 'ServiceUnavailable' ? e : null;
  const what = outage(e);
  return what === undefined ? null : unavailableError(what, e);
}

export function unavailableError(what: string, cause?: unknown): ServiceError {
  return new ServiceError('ServiceUnavailable', `The database is unavailable: ${what}. Try again in a few seconds`, {
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    cause,
  });
}

/** Rethrows a database outage as its 503, anything else as it is. */
export function asUnavailable(e: unknown): never {
  throw unavailable(e) ?? e;
}
