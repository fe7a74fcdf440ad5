import type { Caller } from '../model/caller.js';
import type { Entity } from '../query/conditions.js';
import type { CompiledQuery } from '../query/evaluate.js';
import type { DerivedLimits } from '../query/large.js';
import type { ChangeKind, Resource } from '../model/resources.js';
import type { WriteBatch } from '../storage/storage.js';
import type { Result } from './results.js';
import type { RowRule } from '../model/rules.js';

/** What operations need from the service. */
export interface OperationContext {
  resource: Resource;
  query: CompiledQuery;
  /** Reads the request's entities (body or Source); 400 NoDataSource when there are none. */
  input(): Promise<Entity[]>;
  /**
   * Writes a change to the resource's storage; with it, where the storage can, the webhook
   * outbox messages of the change events it raises (docs/webhooks.md). Resolves to what
   * raises those events, called after the write hooks. `resource` writes another resource
   * than the request's (a DELETE's cascade, docs/relations.md#deleting).
   */
  write(batch: WriteBatch, changes: ReadonlyArray<readonly [ChangeKind, Entity[]]>, resource?: Resource): Promise<Written>;
  /** Checks the caller's rights on another resource (403 Forbidden). */
  authorize: (resource: string, method: string) => void;
  /**
   * The response writes a GET's entities one at a time (JSON or JSON Lines, no Destination,
   * no If-Match): past what a storage holds in memory, it may then stream them.
   */
  stream?: boolean;
  /** Characters search and search_regex may scan for this request. */
  searchBudget?: number;
  /** What `add` and `select` may derive for this request (docs/limits.md). */
  derived?: DerivedLimits;
  /** Who is calling, for hooks. */
  caller: Caller;
  /** The rows the caller may see and change; its conditions are already in `query`. */
  rows: RowRule | null;
  /**
   * If-Match of PUT, PATCH and DELETE: the entity versions (`entityVersion`, an ETag's
   * value) the write may change, or `*`; any other is 412 PreconditionFailed.
   */
  ifMatch?: readonly string[];
  /** If-None-Match of PUT, PATCH and DELETE: versions (or `*`: any entity) the write must not change. */
  ifNoneMatch?: readonly string[];
}

/** A written change whose events are still to be raised. */
export interface Written {
  raise(): Promise<void>;
}

export type Operation = (op: OperationContext) => Promise<Result>;
