// Storage time (docs/operations.md#opentelemetry): how long a client request waited for its
// storages' select, count and write calls, apart from the rest of its operation. Only an
// observer that asks for it (RequestObserver.storageTime) turns it on; until then every call
// below is the storage's own call behind one check, and no request allocates anything for it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { StorageClock } from '../http/observer.js';
import { isPromise } from '../util/eventually.js';
import type { SelectQuery, SelectResult, Storage, WriteBatch } from './storage.js';

/** Made the first time a request is timed: an unused AsyncLocalStorage costs nothing, a used one costs every promise a little. */
let requests: AsyncLocalStorage<StorageClock> | undefined;

/** Runs `answer` (a request's whole answer) with its storage calls added up on `clock`. */
export function timingStorage<T>(clock: StorageClock, answer: () => T): T {
  requests ??= new AsyncLocalStorage();
  return requests.run(clock, answer);
}

/** A new clock: nothing timed yet. */
export function storageClock(): StorageClock {
  return { ms: 0, open: 0, since: 0 };
}

/** `storage.select(query)`, timed when the request is. */
export function storageSelect(storage: Storage, query: SelectQuery): SelectResult | Promise<SelectResult> {
  const clock = requests?.getStore();
  if (clock === undefined) return storage.select(query);
  start(clock);
  let result: SelectResult | Promise<SelectResult>;
  try {
    result = storage.select(query);
  } catch (e) {
    stop(clock);
    throw e;
  }
  if (!isPromise(result)) {
    stop(clock);
    return result;
  }
  return stopped(clock, result);
}

/** `storage.count(query)` (the storage has it), timed when the request is. */
export function storageCount(storage: Storage, query: Pick<SelectQuery, 'conditions' | 'predicate'>): Promise<number> {
  const clock = requests?.getStore();
  if (clock === undefined) return storage.count!(query);
  start(clock);
  return stopped(
    clock,
    called(() => storage.count!(query)),
  );
}

/** `storage.write(batch)`, timed when the request is. */
export function storageWrite(storage: Storage, batch: WriteBatch): Promise<void> {
  const clock = requests?.getStore();
  if (clock === undefined) return storage.write(batch);
  start(clock);
  return stopped(
    clock,
    called(() => storage.write(batch)),
  );
}

/** `storage.nextKeys(...)` (the storage has it), timed when the request is. */
export function storageNextKeys(storage: Storage, count: number, atLeast: number, onlyIfNumbers: boolean): Promise<number | null> {
  const clock = requests?.getStore();
  if (clock === undefined) return storage.nextKeys!(count, atLeast, onlyIfNumbers);
  start(clock);
  return stopped(
    clock,
    called(() => storage.nextKeys!(count, atLeast, onlyIfNumbers)),
  );
}

/** A call's promise; a synchronous throw becomes its rejection (the clock must stop either way). */
function called<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (e) {
    return Promise.reject(e);
  }
}

// Calls that overlap (related reads in parallel) count once: the clock adds up the time at
// least one call was open, so storage time is never more than the request's own time.
function start(clock: StorageClock): void {
  if (clock.open++ === 0) clock.since = performance.now();
}

function stop(clock: StorageClock): void {
  if (--clock.open === 0) clock.ms += performance.now() - clock.since;
}

async function stopped<T>(clock: StorageClock, result: PromiseLike<T>): Promise<T> {
  try {
    return await result;
  } finally {
    stop(clock);
  }
}
