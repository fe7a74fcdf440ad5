/**
 * A value now, or a promise of it. The steps of a request return one when they can answer
 * at once (a GET from the memory storage, no async hook): every promise an async function
 * makes costs a small GET a few turns of the microtask queue (docs/performance.md).
 */
export type Eventually<T> = T | Promise<T>;

/** Whether a value is a promise (any thenable: a storage's own promise type too). */
export function isPromise<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}
