import { ServiceError } from '../errors.js';
import type { ConditionItem } from '../grammar/parse.js';
import type { Entity, Predicate } from '../query/conditions.js';
import { findKey, type Locator } from '../grammar/locator.js';

export type { Entity };

/**
 * What the service asks a storage for. A backend may apply any part itself (push-down)
 * and says which parts it applied; the service applies the rest.
 */
export interface SelectQuery {
  /** The conditions as parsed, for backends that translate them (e.g. to SQL). */
  conditions: readonly ConditionItem[];
  /** The same conditions compiled to a predicate, for backends that filter in memory. */
  predicate: Predicate | null;
  /** Offered only when nothing between the conditions and the order changes the result. */
  order: { locator: Locator; descending: boolean } | null;
  /**
   * With order, to storages with `ordersByKeys: true` only: the further order keys, each
   * breaking the ties of the ones before (`order_asc=LastName,FirstName`). Other storages
   * are never offered an order of several keys (nor the page with it).
   */
  thenBy?: readonly { locator: Locator; descending: boolean }[];
  /** With order: the page to return. offset >= 0; limit -1 means no limit. */
  offset: number;
  limit: number;
  /**
   * The `search` meta-condition, given only to storages with `searches: true`, which
   * apply it together with the conditions (`conditionsApplied` then covers both) or
   * report `conditionsApplied: false`. Order and page may come with it.
   */
  search?: { pattern: string; scope: Locator | null; caseSensitive: boolean };
  /**
   * With `distinct` and `select` (and nothing else reshaping the output): the selected
   * locators. A hint: when it applied the conditions, a storage may return only the first
   * entity (storage order) of each group with equal values at all of them; the service
   * projects and applies distinct anyway.
   */
  distinct?: readonly Locator[];
  /**
   * The only locators the service reads from each entity (`select`, and the order when the
   * storage may not apply it), given only to storages with `stamp` when nothing else needs
   * the whole entity (no toOutput, add or rename, no predicate row rule, no search left to
   * the service). A hint: when it applied the conditions, a storage may return partial
   * entities that give the same values as the stored ones at these locators under the
   * Locator rules (case-insensitive keys, dotted paths, a dotted text as one key), e.g.
   * every top-level member whose key matches a locator's first segment or whole text, in
   * stored order; `stamp` must work for them (ETags).
   */
  select?: readonly Locator[];
  /**
   * The service writes the entities out one at a time (a GET into a JSON or JSON Lines body,
   * with order, offset and limit offered and nothing after them needing the whole result).
   * A storage that applied the conditions and the page may then return an AsyncIterable
   * that reads them as they are consumed (in batches) where it would otherwise refuse a
   * result too large to hold; an error while it is read cuts the response short.
   */
  stream?: boolean;
  /**
   * False when the service was made with `compiledQueries: false`: a storage that scans
   * with the project's generated code (MemoryStorage) runs the closure plan instead.
   */
  generate?: boolean;
}

export interface SelectResult {
  /** Entities in storage order (or in `order` when pagingApplied). */
  entities: Iterable<Entity> | AsyncIterable<Entity>;
  conditionsApplied: boolean;
  /** Order, offset and limit were applied (only possible with conditionsApplied). */
  pagingApplied: boolean;
}

/**
 * A stored entity's identity and version, as its storage issued them (storage contract
 * v2, docs/storage.md). `row` stays the same through the entity's updates and is never
 * given to another entity; `version` changes on every write of the entity and never
 * comes back for that row (a counter per storage, or per row when rows are never reused).
 */
export interface Stamp {
  row: string;
  version: string;
  /**
   * Optional: `<row>.<version>`, the entity's version as clients see it, kept by a storage
   * whose stamp objects last as long as the entity state (MemoryStorage): its ETag is then
   * made from one string instead of a new one every response, and the JSON text of the
   * entity answered alone is kept under the stamp (docs/storage.md). Offering it promises
   * that the state changes only by a write that issues a new stamp, never in place.
   */
  readonly text?: string;
}

/** Which stored entity an update or a delete changes (storage contract v2). */
export interface Target {
  /** The entity as `select` returned it. */
  entity: Entity;
  /** The resource key's values in key order, when the resource declares a key. */
  key?: readonly unknown[];
  /**
   * `stamp(entity)`, when the storage issues stamps: the write changes that row, and only
   * while it still has that version (otherwise it throws Conflict and changes nothing).
   */
  stamp?: Stamp;
}

/** One all-or-nothing change: every part is applied, or none is. */
export interface WriteBatch {
  insert?: Entity[];
  /** `value` replaces the stored entity `target` addresses. */
  update?: Array<{ target: Target; value: Entity }>;
  delete?: Target[];
  /**
   * Inserts into other storages that commit in the same transaction (an event's webhook
   * outbox messages, docs/webhooks.md). Given only to a storage whose `joins` accepts
   * every one of those storages.
   */
  with?: ReadonlyArray<{ storage: Storage; insert: Entity[] }>;
}

export interface Storage {
  /**
   * The entities of a query. A storage holding its entities in memory may answer at once
   * (no promise): a GET from it is then answered in the caller's turn, without promise hops.
   */
  select(query: SelectQuery): SelectResult | Promise<SelectResult>;
  /** Whether select applies SelectQuery.search (the service offers it only then). */
  readonly searches?: boolean;
  /** Whether select applies SelectQuery.thenBy (the service offers orders of several keys only then). */
  readonly ordersByKeys?: boolean;
  /** Optional fast count; the service counts selected entities otherwise. */
  count?(query: Pick<SelectQuery, 'conditions' | 'predicate'>): Promise<number>;
  /**
   * Applies the whole batch atomically; throws (changing nothing) when it cannot: a
   * target that changed since it was selected, or an insert or update to a key another
   * entity has, is a ServiceError 'Conflict' (the service then runs the operation again).
   */
  write(batch: WriteBatch): Promise<void>;
  /**
   * Optional (v2): the row and version of an entity `select` handed out. Without it the
   * service derives versions (ETags) from the entity's content, and runs conditional
   * writes one at a time per resource (correct within one process only).
   */
  stamp?(entity: Entity): Stamp | undefined;
  /**
   * Optional (v2): called once when a resource with a key is given this storage. A storage
   * that has it enforces the key's uniqueness itself, atomically (SQL: a unique index), for
   * inserts and updates; for one without it, the service checks, within one process.
   */
  declareKey?(key: readonly string[]): void;
  /**
   * Optional, for storages that several service instances share (SQL): a cheap text that
   * changes whenever the stored entities change. Caches of admin state (macros, webhooks)
   * compare it instead of reloading everything to see another instance's writes.
   */
  changeToken?(): Promise<string>;
  /**
   * Optional: the indexes the resource declares (ResourceDefinition.indexes), told once
   * when the resource is added. A storage may build them and answer queries through them
   * (SQL); a unique one must refuse a write that would store two equal values (409).
   */
  useIndexes?(indexes: readonly StorageIndex[]): void;
  /**
   * Optional, for storages that several service instances share (SQL): reserves `count`
   * consecutive whole numbers for the keys POST generates (a single declared key),
   * atomically across every instance: no number is handed out twice, and the first is
   * past the largest whole-number key stored and at least `atLeast`. With `onlyIfNumbers`
   * it reserves nothing and answers null when a stored key is not a number (the service
   * then generates UUIDs). Without it, the service finds the largest key itself, within
   * one process (docs/keys.md).
   */
  nextKeys?(count: number, atLeast: number, onlyIfNumbers: boolean): Promise<number | null>;
  /**
   * Optional: resolves when the storage can serve requests now (SQL: its table is ready and
   * the database answers), throws when it cannot. `service.ready()` asks every storage
   * that has it (docs/deployment.md).
   */
  check?(): Promise<void>;
  /**
   * Optional: whether `write` can commit inserts into `other` in its own transaction
   * (WriteBatch.with); SQL storages on one database client can. The service then writes
   * a change and its webhook outbox messages at once (docs/webhooks.md).
   */
  joins?(other: Storage): boolean;
}

/** A top-level property an index covers, spelled as the entities spell it. */
export interface IndexedProperty {
  name: string;
  /**
   * The one JSON type every stored value has when present (from the resource's JSON
   * Schema, which every write is validated against): lets a storage compare and sort
   * the values directly. Undefined when values may be of any type or null.
   */
  type?: 'string' | 'number' | 'boolean';
}

export interface StorageIndex {
  properties: readonly IndexedProperty[];
  /** No two entities hold equal values of the properties. */
  unique: boolean;
  /** With unique: strings equal ignoring case count as equal (macro names). */
  ignoreCase: boolean;
}

/** How a write addresses an entity that `storage.select` returned: with its stamp, and its key values when `key` is given. */
export function targetOf(storage: Storage, entity: Entity, key?: readonly string[] | null): Target {
  const target: Target = { entity };
  const stamp = storage.stamp?.(entity);
  if (stamp !== undefined) target.stamp = stamp;
  if (key) target.key = keyValues(entity, key);
  return target;
}

/** An entity's values of the key properties, in key order (property names match case-insensitively). */
export function keyValues(entity: Entity, key: readonly string[]): unknown[] {
  return key.map((k) => entity[findKey(entity, k) ?? k]);
}

/**
 * What makes two keys equal (value and type: 7 is not "7"): a one-property key's value
 * itself, else its values as JSON; undefined when a value is missing (never unique-checked).
 */
export function keyIdentity(entity: Entity, key: readonly string[]): unknown {
  const values = keyValues(entity, key);
  if (values.some((v) => v === undefined || v === null)) return undefined;
  const v = values[0];
  return values.length === 1 && typeof v !== 'object' ? v : `\0${JSON.stringify(values)}`;
}

/** Errors made by keyTaken. */
const TAKEN = new WeakSet<ServiceError>();

/** The 409 for a write whose key `entity` already holds. */
export function keyTaken(key: readonly string[], entity: Entity): ServiceError {
  const shown = keyValues(entity, key)
    .map((v, i) => `${key[i]}=${JSON.stringify(v)}`)
    .join('&');
  return takenKeyConflict(`Another entity already has the key ${shown}; nothing was written`);
}

/**
 * A Conflict that says a key is taken (a storage's unique index refused it): the service
 * answers a POST of keys its client sent with it at once, as running it again would be
 * refused again (docs/keys.md#keys-are-unique).
 */
export function takenKeyConflict(message: string): ServiceError {
  const error = new ServiceError('Conflict', message);
  TAKEN.add(error);
  return error;
}

/** Whether a Conflict says a key is taken (made by keyTaken), rather than that the write lost a race. */
export function isKeyTaken(error: unknown): boolean {
  return error instanceof ServiceError && TAKEN.has(error);
}

/** Every entity: the query a storage gets for "no conditions". */
export const SELECT_ALL: SelectQuery = Object.freeze({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 });
