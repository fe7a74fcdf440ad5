import { ServiceError } from '../errors.js';
import type { Storage } from './storage.js';

/** One storage's answer to a readiness check, with the resources it serves. */
export interface StorageReadiness {
  resources: string[];
  ready: boolean;
  /** Why it is not ready (no credentials: a connection string's password is masked). */
  message?: string;
}

/** The answer of `service.ready()`: ready when every storage that can be checked is. */
export interface Readiness {
  ready: boolean;
  storages: StorageReadiness[];
}

const DEFAULT_READY_TIMEOUT_MS = 5000;

/** Text of a failed check: a ServiceError's own message, else the exception's, with any URL password masked. */
function why(error: unknown): string {
  const text = ServiceError.is(error) ? error.message : error instanceof Error ? error.message : String(error);
  return text.replace(/(\/\/[^/\s:@]+:)[^@\s/]*@/g, '$1***@').slice(0, 300);
}

/**
 * Asks each distinct storage with a `check` whether it can serve now, all at once, each
 * within `timeoutMs` (a check still running then counts as not ready). Storages without
 * `check` (memory, computed) are always ready and are not listed.
 */
export async function checkStorages(
  resources: ReadonlyArray<{ name: string; storage: Storage }>,
  timeoutMs = DEFAULT_READY_TIMEOUT_MS,
): Promise<Readiness> {
  const byStorage = new Map<Storage, string[]>();
  for (const { name, storage } of resources) {
    if (typeof storage.check !== 'function') continue;
    const names = byStorage.get(storage);
    if (names) names.push(name);
    else byStorage.set(storage, [name]);
  }
  const storages = await Promise.all(
    [...byStorage].map(async ([storage, names]): Promise<StorageReadiness> => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        timer.unref?.();
      });
      try {
        await Promise.race([storage.check!(), late]);
        return { resources: names, ready: true };
      } catch (e) {
        return { resources: names, ready: false, message: why(e) };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: storages.every((s) => s.ready), storages };
}
