import type { ServiceError } from '../errors.js';
import type { PlainRequest, PlainResponse } from '../http/types.js';
import type { Origin } from './origin.js';

/**
 * What the modules that make requests on the service's behalf (macros' callers, Source,
 * Destination, webhook deliveries and custom payloads) are given instead of the service
 * itself: service.ts, the composition root, builds one and data flows one way.
 */
export interface LocalRequests {
  /**
   * Runs a request through the service in-process at `depth`: with the caller's context
   * on the caller's behalf (Source, Destination), with none for webhook deliveries. It
   * counts against its origin's bound; past it, the answer is a 508.
   */
  handle(request: PlainRequest, depth: number, context?: unknown, origin?: Origin): Promise<PlainResponse>;
  /**
   * The 508 answer for a request its origin may no longer cause, or (given) that another
   * loop limit stopped: one Error record per origin.
   */
  refuse(request: PlainRequest, origin: Origin, depth: number, error?: ServiceError): Promise<PlainResponse>;
  /** How many requests one client request may cause (service option maxCausedRequests). */
  readonly maxCaused: number;
}

/** The policy for requests that leave the process (webhooks, Source, Destination). */
export interface OutgoingPolicy {
  /** Whether they may reach loopback and private addresses (service option allowPrivateDestinations). */
  readonly allowPrivate: boolean;
  /** Per-request timeout in milliseconds (the webhooks' timeoutMs). */
  readonly timeoutMs: number;
}
