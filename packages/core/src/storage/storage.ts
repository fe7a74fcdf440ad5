import type { Condition } from '../grammar/parse.js';
import type { Entity, Predicate } from '../query/conditions.js';
import type { Locator } from '../query/locator.js';

export type { Entity };

/**
 * What the service asks a storage for. A backend may apply any part itself (push-down)
 * and says which parts it applied; the service applies the rest.
 */
export interface SelectQuery {
  /** The conditions as parsed, for backends that translate them (e.g. to SQL). */
  conditions: readonly Condition[];
  /** The same conditions compiled to a predicate, for backends that filter in memory. */
  predicate: Predicate | null;
  /** Offered only when nothing between the conditions and the order changes the result. */
  order: { locator: Locator; descending: boolean } | null;
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
}

export interface SelectResult {
  /** Entities in storage order (or in `order` when pagingApplied). */
  entities: Iterable<Entity> | AsyncIterable<Entity>;
  conditionsApplied: boolean;
  /** Order, offset and limit were applied (only possible with conditionsApplied). */
  pagingApplied: boolean;
}

/** One all-or-nothing change: every part is applied, or none is. */
export interface WriteBatch {
  insert?: Entity[];
  /** `target` is an entity exactly as `select` returned it; `value` replaces it. */
  update?: Array<{ target: Entity; value: Entity }>;
  delete?: Entity[];
}

export interface Storage {
  select(query: SelectQuery): Promise<SelectResult>;
  /** Whether select applies SelectQuery.search (the service offers it only then). */
  readonly searches?: boolean;
  /** Optional fast count; the service counts selected entities otherwise. */
  count?(query: Pick<SelectQuery, 'conditions' | 'predicate'>): Promise<number>;
  /** Applies the whole batch atomically; throws (changing nothing) when it cannot. */
  write(batch: WriteBatch): Promise<void>;
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

/** Every entity: the query a storage gets for "no conditions". */
export const SELECT_ALL: SelectQuery = Object.freeze({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 });
