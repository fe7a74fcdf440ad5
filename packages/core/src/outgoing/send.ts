// One HTTP request the service sends to another host on someone's behalf: a Source or
// Destination header's request and a webhook delivery (docs/security.md#ssrf). Every such
// request goes through send(): the SSRF guard on the resolved address (unless private
// destinations are allowed), no redirects (one could lead past the guard), one timeout
// covering the answer's body, and one classification of what went wrong.
import { ServiceError } from '../errors.js';
import { outgoingFetch, refusedResolved } from './guard.js';

/** What the service's settings allow an outgoing request. */
export interface SendPolicy {
  readonly allowPrivate: boolean;
  readonly timeoutMs: number;
  /** Aborts the request from outside (e.g. a closing service); a SendFailure 'aborted' with its reason. */
  readonly signal?: AbortSignal;
}

export interface OutgoingRequest {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | null;
}

/**
 * Why a request got no answer: `refused` by the SSRF guard (detail: the reason), its host
 * `unresolved`, no answer within the `timeout`, `unreachable` (detail: the error and its
 * cause), or `aborted` through the policy's signal (its reason in `reason`).
 */
export class SendFailure extends Error {
  constructor(
    readonly kind: 'refused' | 'unresolved' | 'timeout' | 'unreachable' | 'aborted',
    readonly detail: string,
    readonly reason?: unknown,
  ) {
    super(detail);
  }
}

const TIMED_OUT = Symbol('timed out');

/**
 * Sends the request and hands the answer to `read`, with a signal that aborts when the
 * time runs out, while `read` is still reading the body. A failure to reach the host is a
 * SendFailure, and so is any other failure while `read` reads, but a ServiceError (the
 * service's own refusal, e.g. a body over its limit) passes through unchanged.
 */
export async function send<T>(
  url: URL,
  request: OutgoingRequest,
  policy: SendPolicy,
  read: (response: Response, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (!policy.allowPrivate) {
    let reason: string | null;
    try {
      reason = await refusedResolved(url);
    } catch (e) {
      throw new SendFailure('unresolved', `cannot resolve ${url.hostname}: ${(e as Error).message}`);
    }
    if (reason !== null) throw new SendFailure('refused', reason);
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(TIMED_OUT), policy.timeoutMs);
  timer.unref();
  const outside = policy.signal;
  const abortFromOutside = () => controller.abort(outside!.reason);
  if (outside?.aborted) abortFromOutside();
  else outside?.addEventListener('abort', abortFromOutside, { once: true });
  try {
    const response = await outgoingFetch(policy.allowPrivate)(url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: controller.signal,
    });
    return await read(response, controller.signal);
  } catch (e) {
    // The service's own refusals (a body over its limit) pass as they are.
    if (ServiceError.is(e)) throw e;
    if (controller.signal.aborted && controller.signal.reason === TIMED_OUT) throw new SendFailure('timeout', `${policy.timeoutMs} ms`);
    if (controller.signal.aborted) throw new SendFailure('aborted', 'aborted', controller.signal.reason);
    const cause = (e as { cause?: { message?: string } }).cause?.message;
    throw new SendFailure('unreachable', `${(e as Error).message}${cause ? ` (${cause})` : ''}`);
  } finally {
    clearTimeout(timer);
    outside?.removeEventListener('abort', abortFromOutside);
  }
}
