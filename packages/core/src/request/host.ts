import type { ErrorRecords } from '../admin/error-records.js';
import type { Macros } from '../admin/macros.js';
import type { ServiceError } from '../errors.js';
import type { Caller } from '../model/caller.js';
import type { ResourceRegistry } from '../model/resources.js';
import type { HeaderRequestDeps } from '../outgoing/source-destination.js';
import type { EventStreams } from '../streams/streams.js';
import type { Events } from '../webhooks/events.js';
import type { RootHost } from './root.js';

export const LISTING = 'Service.AvailableResource';

/** Local requests (macros, webhooks, Source) may nest this deep before a loop is assumed. */
export const MAX_DEPTH = 16;

/** What `onError` learns besides the error. */
export interface ErrorInfo {
  method: string;
  uri: string;
  /** The caller's context and principal (the principal is undefined when authentication failed). */
  caller: Caller;
  /** The thrown value before it became a ServiceError (its stack). */
  cause: unknown;
}

/** What the pipeline runs requests against: parts the service (the composition root) wires, never the service itself. */
export interface PipelineHost extends RootHost {
  readonly resources: ResourceRegistry;
  readonly events: Events;
  readonly streams: EventStreams;
  readonly macros: Macros;
  readonly errors: ErrorRecords;
  /** Source and Destination headers. */
  readonly headerRequests: HeaderRequestDeps;
  readonly options: {
    readonly maxBodyBytes: number;
    readonly maxNestingDepth: number;
    readonly maxEntities: number;
    readonly searchBudget: number;
    readonly maxLocators: number;
    readonly maxDerivedValues: number;
    readonly maxCausedRequests: number;
    readonly onError?: (error: ServiceError, info: ErrorInfo) => void;
  };
  /** 403 when the caller may not use the method on the resource. */
  authorize(caller: Caller, resource: string, method: string): void;
}
