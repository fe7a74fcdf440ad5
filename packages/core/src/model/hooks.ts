import type { Caller } from './caller.js';
import type { Entity } from '../query/conditions.js';

/**
 * An app's hooks on one resource (docs/resources.md). Each gets the caller (context, principal).
 * A `before` hook refuses by throwing a ServiceError, and may return a replacement entity;
 * an `after` hook runs once the change is stored (a throw then answers an error, the
 * change stays). Reads see the entities as clients do (after toOutput): `O`; the others
 * see them as stored: `T`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context and principal
export interface ResourceHooks<T extends object = Entity, O extends object = T, C = any, P = any> {
  /** Before GET, HEAD and REPORT. */
  beforeRead?: (caller: Caller<C, P>) => void | Promise<void>;
  /** After GET and HEAD, with the selected entities; may return others to answer instead. */
  afterRead?: (entities: O[], caller: Caller<C, P>) => O[] | void | Promise<O[] | void>;
  /** Before an entity is inserted (POST, PUT of a new entity, safepost); may return the entity to store. */
  beforeInsert?: (entity: T, caller: Caller<C, P>) => T | void | Promise<T | void>;
  afterInsert?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
  /** Before an entity is updated (PUT, PATCH, safepost), with the merged value and the stored one. */
  beforeUpdate?: (entity: T, existing: T, caller: Caller<C, P>) => T | void | Promise<T | void>;
  afterUpdate?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
  /** Before the matched entities are deleted. */
  beforeDelete?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
  afterDelete?: (entities: T[], caller: Caller<C, P>) => void | Promise<void>;
}
