// Request observers: the onRequest/onResponse hook pair apps log, trace and count with
// (docs/operations.md). The service calls them only for client requests (not its own
// local requests: webhooks, Source, macros), and only when some observer is registered.

import type { HeaderValue } from './types.js';

/** A client request as it arrives, before anything else runs. */
export interface RequestInfo {
  readonly method: string;
  /** The URI as the client sent it (below the adapter's mount path). */
  readonly uri: string;
  /** The request headers (names as the adapter gave them). */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** The app's per-request context (the adapter's `context`). */
  readonly context: unknown;
}

/** The answer to a client request, once its status and headers are known (a streamed body may still be flowing). */
export interface ResponseInfo extends RequestInfo {
  readonly status: number;
  /** The resource the URI named, once resolved; undefined for the root, a 401 or a URI that did not parse. */
  readonly resource: string | undefined;
  /** Milliseconds from arrival to the response's status and headers. */
  readonly durationMs: number;
  /**
   * Milliseconds the operation took: its storage reads and writes, filtering and hooks,
   * until the result was ready to write; undefined when no operation ran.
   */
  readonly operationMs: number | undefined;
  /**
   * Milliseconds the request waited for its storages (select, count and write calls, the
   * time at least one was open), within `durationMs`; undefined unless an observer
   * asked for it with `storageTime` (docs/operations.md#storage-time).
   */
  readonly storageMs: number | undefined;
}

/**
 * Told of every client request and its response. `onRequest`'s return value (a child
 * logger, a span, a start time) is handed back to `onResponse` as `state`. A throw from
 * either is ignored: an observer never changes an answer.
 */
export interface RequestObserver<S = unknown> {
  onRequest?(request: RequestInfo): S;
  onResponse?(response: ResponseInfo, state: S): void;
  /**
   * Time the request's storage calls (`ResponseInfo.storageMs`). It runs each observed
   * request in an AsyncLocalStorage, which costs the process's promises a little while
   * such an observer is registered; off by default.
   */
  storageTime?: boolean;
}

/** Storage time of one request as it adds up (storage/clock.ts). */
export interface StorageClock {
  /** Milliseconds during which at least one storage call was open. */
  ms: number;
  /** Storage calls open now. */
  open: number;
  /** When the open calls began (performance.now()). */
  since: number;
}

/** What the pipeline notes about a request while it is observed. */
export interface RequestTrace {
  resource: string | undefined;
  operationStart: number | undefined;
  operationMs: number | undefined;
  /** Set when an observer asked for storage time. */
  storage: StorageClock | undefined;
}
