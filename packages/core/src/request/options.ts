// The service's options (docs/limits.md, docs/in-app.md): what an app gives createService,
// and the options resolved with their defaults and checked, as the request pipeline reads
// them (request/host.ts). A bad value stops the service from being made, naming the option.
import type { ApiKeyConfig } from '../model/api-keys.js';
import type { Authenticate } from '../model/caller.js';
import type { ProtocolProvider } from '../content-types/content-type.js';
import { DEFAULT_MAX_ENTITIES, DEFAULT_MAX_NESTING, MAX_NESTING_LIMIT } from '../util/nesting.js';
import type { ErrorRecordBounds } from '../admin/error-records.js';
import type { RedactionOptions } from '../model/redaction.js';
import type { AdminOptions } from '../admin/access.js';
import { ServiceError } from '../errors.js';
import type { CorsOptions } from '../http/cors.js';
import type { RequestInfo, ResponseInfo } from '../http/observer.js';
import { DEFAULT_MAX_CAUSED } from '../outgoing/origin.js';
import type { ErrorInfo } from './host.js';
import type { Storage } from '../storage/storage.js';
import { DEFAULT_SEARCH_BUDGET } from '../query/scan.js';
import { DEFAULT_DERIVED_LIMITS } from '../query/large.js';
import type { WebhookOptions } from '../webhooks/delivery.js';
import type { StreamOptions } from '../streams/streams.js';

export interface ServiceOptions {
  /**
   * Who may use the built-in admin resources (Error records, macros, webhooks, their log).
   * With `authenticate` they are closed until rules here open them (docs/security.md).
   */
  admin?: AdminOptions;
  /**
   * More header and body-property names (or patterns) whose values Error records replace by
   * *****, beside the default credential-like ones and the headers `authenticate` reads
   * (docs/security.md#redaction).
   */
  redact?: RedactionOptions;
  /** API keys (the built-in authenticator); none, and no `authenticate`, means the service is open. */
  apiKeys?: ApiKeyConfig[];
  /** Who is calling: a principal from the request and the app's context, or a throw (401). Replaces `apiKeys`. */
  authenticate?: Authenticate;
  /** Told of every unexpected error (a 500) with its details, for logging; the client gets a generic message. */
  onError?: (error: ServiceError, info: ErrorInfo) => void;
  /**
   * Told of every client request as it arrives (docs/operations.md); what it returns is
   * handed to `onResponse` as its second argument. For access logs with the app's logger.
   */
  onRequest?: (request: RequestInfo) => unknown;
  /** Told of every client request's response: status, resource, durations (docs/operations.md). */
  onResponse?: (response: ResponseInfo, state: unknown) => void;
  /** Largest accepted request body in bytes (default 10 MiB); larger is 413. */
  maxBodyBytes?: number;
  /** Deepest nesting of objects and arrays accepted in an entity (default 64, at most 1000); deeper is 400. */
  maxNestingDepth?: number;
  /** Most entities one request may write (a body, a Source, an Excel import; default 100,000); more is 413. */
  maxEntities?: number;
  /** How many error records to keep (default 2000, the newest). */
  maxErrorRecords?: number;
  /** How many characters all error records together may keep (default 8 Mi); past it the oldest go (docs/limits.md). */
  maxErrorRecordChars?: number;
  /**
   * The part of `maxErrorRecords` and `maxErrorRecordChars` one principal may hold once the
   * store is full (default 0.25): past it, its own oldest records go first (docs/security.md).
   */
  errorRecordShare?: number;
  /** Whether entity resources raise Inserted/Updated/Deleted events (default true). */
  events?: boolean;
  /** Storage for the built-in admin resources (macros, webhooks, outbox, errors); undefined or omitted: memory. */
  adminStorage?: (resourceName: string) => Storage | undefined;
  /** Extra protocol providers, after the default one. */
  protocols?: ProtocolProvider[];
  /** Let webhooks, Source and Destination reach loopback and private addresses. */
  allowPrivateDestinations?: boolean;
  /** Webhook delivery: per-attempt timeout, retry schedule, concurrency, log size. */
  webhooks?: WebhookOptions;
  /** Event streams (Server-Sent Events): retention for Last-Event-ID, heartbeat, limits, a shared log (docs/events.md). */
  streams?: StreamOptions;
  /** Answer browsers on other origins (CORS); `true` = pages on localhost (dev servers). Off by default. */
  cors?: CorsOptions | boolean;
  /**
   * Local requests (webhooks, Source, Destination, custom payloads) and webhook delivery
   * attempts one client request may cause in all, however they fan out (default 256);
   * past it they are refused with 508 InfiniteLoopDetected.
   */
  maxCausedRequests?: number;
  /** Characters of text search and search_regex may scan per request (default 32 Mi); more is 400. */
  searchBudget?: number;
  /** Locators `add` and `select` may list together in one request (default 100); more is 400 (docs/limits.md). */
  maxLocators?: number;
  /**
   * Values `add` and `select` may make in one request, entities projected times locators
   * (default 10,000,000); more is 400 (docs/limits.md).
   */
  maxDerivedValues?: number;
  /**
   * Generate each query's scan as code (`new Function`, default true where the runtime
   * allows it). `false` turns it off for this service's queries (for a CSP that forbids
   * `unsafe-eval`); other services keep their own setting; queries answer the same either way.
   */
  compiledQueries?: boolean;
  /**
   * Key of the ETags of storages without stamps (an HMAC of the stored entity; at least
   * 16 characters). By default a random key per process, so such ETags differ between
   * processes: give every instance that shares one stamp-less storage the same secret
   * (docs/concurrency.md). Storages with stamps (memory, SQL) do not use it.
   */
  etagSecret?: string;
  /** Most related entities an embedded to-many array holds (default 1000; a relation may set its own): docs/relations.md. */
  maxEmbedded?: number;
}

/** The options as the service runs them; API keys are not kept here (only their digests, in the authenticator), nor the ETag secret. */
export type ResolvedOptions = Required<
  Pick<
    ServiceOptions,
    | 'maxBodyBytes'
    | 'maxNestingDepth'
    | 'maxEntities'
    | 'maxErrorRecords'
    | 'maxErrorRecordChars'
    | 'errorRecordShare'
    | 'events'
    | 'allowPrivateDestinations'
    | 'searchBudget'
    | 'maxLocators'
    | 'maxDerivedValues'
    | 'maxCausedRequests'
  >
> &
  Omit<ServiceOptions, 'apiKeys' | 'etagSecret'>;

/** The options with their defaults filled in and checked; API keys and the ETag secret are the service's own. */
export function resolveOptions(rest: Omit<ServiceOptions, 'apiKeys' | 'etagSecret'>): ResolvedOptions {
  // An option given as undefined (a config file that leaves a limit out) keeps its default.
  const given = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Omit<
    ServiceOptions,
    'apiKeys' | 'etagSecret'
  >;
  const resolved: ResolvedOptions = {
    maxBodyBytes: 10 * 1024 * 1024,
    maxNestingDepth: DEFAULT_MAX_NESTING,
    maxEntities: DEFAULT_MAX_ENTITIES,
    maxErrorRecords: 2000,
    maxErrorRecordChars: 8 * 1024 * 1024,
    errorRecordShare: 0.25,
    events: true,
    allowPrivateDestinations: false,
    searchBudget: DEFAULT_SEARCH_BUDGET,
    maxLocators: DEFAULT_DERIVED_LIMITS.maxLocators,
    maxDerivedValues: DEFAULT_DERIVED_LIMITS.maxDerivedValues,
    maxCausedRequests: DEFAULT_MAX_CAUSED,
    ...given,
  };
  const depth = resolved.maxNestingDepth;
  if (!Number.isInteger(depth) || depth < 1 || depth > MAX_NESTING_LIMIT)
    throw new Error(`maxNestingDepth must be a whole number from 1 to ${MAX_NESTING_LIMIT}, not ${depth}`);
  const most = resolved.maxEntities;
  if (!Number.isInteger(most) || most < 1) throw new Error(`maxEntities must be a whole number of at least 1, not ${most}`);
  const caused = resolved.maxCausedRequests;
  if (!Number.isInteger(caused) || caused < 1) throw new Error(`maxCausedRequests must be a whole number of at least 1, not ${caused}`);
  const embedded = resolved.maxEmbedded;
  if (embedded !== undefined && !(Number.isInteger(embedded) && embedded >= 0))
    throw new Error(`maxEmbedded must be a whole number of at least 0, not ${embedded}`);
  for (const name of ['maxLocators', 'maxDerivedValues'] as const) {
    const n = resolved[name];
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1, not ${n}`);
  }
  return resolved;
}

/** The bounds of the Error-record store (docs/errors.md), checked. */
export function errorRecordBounds(
  options: Pick<ServiceOptions, 'maxErrorRecords' | 'maxErrorRecordChars' | 'errorRecordShare'>,
): ErrorRecordBounds {
  const { maxErrorRecords: count = 2000, maxErrorRecordChars: chars = 0, errorRecordShare: share = 0 } = options;
  if (!Number.isInteger(count) || count < 1) throw new Error(`maxErrorRecords must be a whole number of at least 1, not ${count}`);
  if (!Number.isInteger(chars) || chars < 1) throw new Error(`maxErrorRecordChars must be a whole number of at least 1, not ${chars}`);
  if (typeof share !== 'number' || !(share > 0 && share <= 1))
    throw new Error(`errorRecordShare must be a number above 0 and at most 1, not ${share}`);
  return { count, chars, share };
}
