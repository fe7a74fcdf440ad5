import type { PlainRequest, PlainResponse } from '../http/types.js';
import type { RequestInfo, RequestObserver, RequestTrace, ResponseInfo } from '../http/observer.js';
import { isPromise, type Eventually } from '../util/eventually.js';
import { storageClock, timingStorage } from '../storage/clock.js';

/**
 * A client request answered under its observers (docs/operations.md): each one's
 * onRequest first, the answer, then each one's onResponse with the state it returned.
 * Only called when some observer is registered, so an unobserved service pays nothing.
 */
export function observed(
  observers: readonly RequestObserver[],
  request: PlainRequest,
  context: unknown,
  answer: (trace: RequestTrace) => Eventually<PlainResponse>,
): Eventually<PlainResponse> {
  const started = performance.now();
  const info: RequestInfo = { method: request.method.toUpperCase(), uri: request.uri || '/', headers: request.headers ?? {}, context };
  const states = observers.map((o) => attempt(() => o.onRequest?.(info)));
  const storage = observers.some((o) => o.storageTime === true) ? storageClock() : undefined;
  const trace: RequestTrace = { resource: undefined, operationStart: undefined, operationMs: undefined, storage };
  const done = (response: PlainResponse): PlainResponse => {
    const end: ResponseInfo = {
      ...info,
      status: response.status,
      resource: trace.resource,
      durationMs: performance.now() - started,
      operationMs: trace.operationMs,
      storageMs: storage?.ms,
    };
    observers.forEach((o, i) => attempt(() => o.onResponse?.(end, states[i])));
    return response;
  };
  const response = storage === undefined ? answer(trace) : timingStorage(storage, () => answer(trace));
  return isPromise(response) ? Promise.resolve(response).then(done) : done(response);
}

function attempt<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
