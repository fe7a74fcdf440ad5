import type { Caller } from './caller.js';
import type { Entity } from '../query/conditions.js';

/** What a beforeWrite hook is told of the write. */
export interface WriteChange<T extends object = Entity> {
  operation: 'insert' | 'update';
  /** The stored entity an update replaces. */
  existing?: T;
  /** Checks that the caller may use `method` on `resource` (403 Forbidden otherwise). */
  authorize(resource: string, method: string): void;
  /** Who is writing. */
  caller: Caller;
  /** The properties this request gave, before they were merged into the stored entity (an update's patch). */
  sent?: Entity;
}

/**
 * An app's hooks on one resource, in the order they run (docs/lifecycle.md). Each gets
 * the caller (context, principal). A `before` hook refuses by throwing a ServiceError,
 * and may return a replacement entity; an `after` hook runs once the change is stored (a
 * throw then answers an error, the change stays). Reads see the entities as clients do
 * (after toOutput): `O`; the others see them as stored: `T`.
 *
 * A write runs: beforeInsert / beforeUpdate (per entity), beforeWrite (per entity), the
 * schema, the row rule's check, the storage's write, afterWrite, afterInsert /
 * afterUpdate / afterDelete, then the change's events (webhooks, streams).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context and principal
export interface ResourceHooks<T extends object = Entity, O extends object = T, C = any, P = any> {
  /** Before GET, HEAD and REPORT. */
  beforeRead?: (caller: Caller<C, P>) => void | Promise<void>;
  /** After GET and HEAD, with the selected entities; may return others to answer instead. */
  afterRead?: (entities: O[], caller: Caller<C, P>) => O[] | void | Promise<O[] | void>;
  /** Before an entity is inserted (POST, PUT of a new entity, safepost); may return the entity to store. */
  beforeInsert?: (entity: T, caller: Caller<C, P>) => T | void | Promise<T | void>;
  /** Before an entity is updated (PUT, PATCH, safepost), with the merged value and the stored one. */
  beforeUpdate?: (entity: T, existing: T, caller: Caller<C, P>) => T | void | Promise<T | void>;
  /**
   * Before every inserted or updated entity is validated, after beforeInsert/beforeUpdate:
   * returns the entity to store (not yet validated); throw a ServiceError to refuse it.
   */
  beforeWrite?: (entity: Entity, change: WriteChange<T>) => T | Promise<T>;
  /** Before the matched entities are deleted. */
  beforeDelete?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
  /** After any write is stored, before the per-kind after hooks (e.g. to refresh a cache). */
  afterWrite?: () => void | Promise<void>;
  afterInsert?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
  afterUpdate?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
  afterDelete?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
}

/**
 * The resource's hooks as one object: `beforeWrite` and `afterWrite` given beside `hooks`
 * (their first place, still accepted) join the others; given in both places is a mistake.
 */
export function resourceHooks(
  name: string,
  hooks: ResourceHooks | undefined,
  beforeWrite: ResourceHooks['beforeWrite'],
  afterWrite: ResourceHooks['afterWrite'],
): ResourceHooks {
  if (beforeWrite === undefined && afterWrite === undefined) return hooks ?? {};
  for (const [hook, given] of [
    ['beforeWrite', beforeWrite],
    ['afterWrite', afterWrite],
  ] as const)
    if (given !== undefined && hooks?.[hook] !== undefined) throw new Error(`Resource '${name}': give ${hook} once, in hooks`);
  return { ...hooks, ...(beforeWrite && { beforeWrite }), ...(afterWrite && { afterWrite }) };
}
