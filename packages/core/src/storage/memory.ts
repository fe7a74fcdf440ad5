import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { evaluate, type CompiledQuery } from '../query/evaluate.js';
import { NO_META } from '../query/meta-conditions.js';
import { nextTurn } from '../util/turn.js';
import { EqualityIndex, type IndexedChange } from './equality-index.js';
import { OrderIndex } from './order-index.js';
import {
  keyIdentity,
  keyTaken,
  type Entity,
  type SelectQuery,
  type SelectResult,
  type Stamp,
  type Storage,
  type StorageIndex,
  type Target,
  type WriteBatch,
} from './storage.js';

/** What a write that succeeded returns: it is done in the caller's turn. */
const DONE: Promise<void> = Promise.resolve();

/**
 * Stamps of stored entities, issued on first request (most entities are never asked for
 * one, so they cost nothing). Shared by every MemoryStorage: copies of a storage (the
 * CLI's pending writes) hand out the same objects, so they honour the same stamps. An
 * update replaces the object, so a new object is a new version.
 */
const STAMPS = new WeakMap<Entity, Stamp>();

/** A stamp of this storage: kept as long as its entity state, so its text is made once, when first asked. */
class MemoryStamp implements Stamp {
  #text: string | undefined;
  constructor(
    readonly row: string,
    readonly version: string,
  ) {}

  get text(): string {
    return (this.#text ??= `${this.row}.${this.version}`);
  }
}

let clock = 0;
const issue = () => String(++clock);
// Versions start with a prefix drawn per process: a restarted server (the CLI on its file)
// counts from 1 again, and an ETag issued before the restart must not match after it.
const EPOCH = randomBytes(6).toString('base64url');
const version = () => `${EPOCH}${++clock}`;

/** Keys a write checks in one turn: a larger batch is checked in slices (docs/limits.md#large-work). */
const KEYS_PER_SLICE = 8192;

/** Below this many entities a lookup scans: an index would cost more memory than it saves time. */
const INDEXED_FROM = 512;

/**
 * Entities in an array, in insertion order; updates keep positions. Accepts every
 * push-down. Entities handed out are the stored objects: treat them as read-only
 * (writes go through `write`, which replaces objects instead of mutating them).
 * A lookup by one `=` condition (`/Person/7`, `Id=7`), the check that an inserted key is
 * free and the largest key a POST counts from are answered by an equality index once the
 * resource is large (built on first use, then kept up to date by `write`), so they cost
 * the same at a thousand entities as at a million (docs/performance.md).
 */
export class MemoryStorage implements Storage {
  private entities: Entity[];
  private key: readonly string[] | null = null;
  private readonly index: EqualityIndex | null;
  /** The declared indexes that serve an order (useIndexes). */
  private orders: readonly OrderIndex[] = [];
  readonly ordersByKeys = true;
  /** A write whose key check goes on in slices, and those queued behind it; null when none is. */
  private writing: Promise<void> | null = null;

  /** `options.index: false`: no equality index (a caller that keeps its own, as the CLI's file store does). */
  constructor(initial: Entity[] = [], options: { index?: boolean } = {}) {
    this.entities = initial.slice();
    this.index = options.index === false ? null : new EqualityIndex(() => this.entities);
  }

  /** Answers at once: the service then serves a GET without waiting (a subclass may return a promise). */
  select(query: SelectQuery): SelectResult | Promise<SelectResult> {
    if (query.predicate === null && query.order === null && query.offset === 0 && query.limit < 0) {
      return { entities: this.entities, conditionsApplied: true, pagingApplied: true };
    }
    if (this.index !== null && this.entities.length >= INDEXED_FROM) {
      // Order, offset and limit of at most one entity: left to the service.
      const hits = this.index.lookup(query);
      if (hits !== undefined) return { entities: hits, conditionsApplied: true, pagingApplied: false };
      const top = this.index.top(query);
      if (top !== undefined) return { entities: top, conditionsApplied: true, pagingApplied: true };
    }
    if (query.order !== null) {
      for (const index of this.orders) {
        const page = index.page(query);
        if (page !== undefined) return { entities: page, conditionsApplied: true, pagingApplied: true };
      }
    }
    const order = query.order === null ? null : [query.order, ...(query.thenBy ?? [])];
    const compiled: CompiledQuery = {
      conditions: query.conditions,
      predicate: query.predicate,
      search: null,
      project: null,
      sourceOrder: order?.map((k) => k.locator) ?? null,
      // Conditions alone (a lookup like `id=7`) need no meta-conditions of their own.
      meta:
        query.order === null && query.offset === 0 && query.limit < 0
          ? NO_META
          : { ...NO_META, limit: query.limit, offset: query.offset, order },
    };
    if (query.generate === false) compiled.generate = false;
    return { entities: evaluate(this.entities, compiled), conditionsApplied: true, pagingApplied: true };
  }

  count(query: Pick<SelectQuery, 'predicate'>): Promise<number> {
    const p = query.predicate;
    if (p === null) return Promise.resolve(this.entities.length);
    let n = 0;
    for (const e of this.entities) if (p(e)) n++;
    return Promise.resolve(n);
  }

  /** The entity's row and version; stable while the object is stored (an update stores a new object and version). */
  stamp(entity: Entity): Stamp {
    let stamp = STAMPS.get(entity);
    if (stamp === undefined) STAMPS.set(entity, (stamp = new MemoryStamp(issue(), version())));
    return stamp;
  }

  /**
   * The resource's declared indexes: each (but a case-insensitive one, whose point is
   * equality) keeps the entities sorted by its properties, so that an order on exactly them
   * reads its page off the index (docs/storage.md#memory-indexes). `unique` is not enforced here.
   */
  useIndexes(indexes: readonly StorageIndex[]): void {
    this.orders = indexes
      .filter((i) => !i.ignoreCase)
      .map(
        (i) =>
          new OrderIndex(
            i.properties.map((p) => p.name),
            () => this.entities,
          ),
      );
    // Sorted now (in slices past a few thousand entities), as a database builds an index when it is created.
    for (const index of this.orders) index.prepare();
  }

  declareKey(key: readonly string[]): void {
    this.key = key;
  }

  /**
   * Finds each target by its stamp's row (by the object itself when it has no stamp); a
   * target that is gone or at another version fails the batch with Conflict, as does a
   * key (of an insert, or changed by an update) that another entity has. Done in the
   * caller's turn, unless its keys take more than one slice to check (docs/limits.md#large-work):
   * then the check goes on in slices, later writes waiting for it, and the batch is applied
   * in the turn its check ends.
   */
  write(batch: WriteBatch): Promise<void> {
    if (this.writing !== null) return this.queue(() => finish(this.applying(batch)));
    const steps = this.applying(batch);
    try {
      if (steps.next().done) return DONE;
    } catch (e) {
      // Refused (Conflict) as a rejection, as any storage refuses.
      return Promise.reject(e);
    }
    return this.queue(() => finish(steps));
  }

  /** Runs `run` after the writes queued before it; until it settles, later writes queue too. */
  private queue(run: () => Promise<void>): Promise<void> {
    const done = (this.writing ?? DONE).then(run);
    const settled = done.then(noop, noop);
    this.writing = settled;
    void settled.then(() => {
      if (this.writing === settled) this.writing = null;
    });
    return done;
  }

  /**
   * Applies the batch in place, or throws leaving the entities as they were. Yields between
   * slices of a long key check: the entities do not change meanwhile, as writes queue.
   */
  private *applying(batch: WriteBatch): Generator<void, void, void> {
    const updates = new Map<Entity | string, { target: Target; value: Entity }>();
    for (const u of batch.update ?? []) updates.set(u.target.stamp?.row ?? u.target.entity, u);
    const deletes = new Map<Entity | string, Target>();
    for (const t of batch.delete ?? []) deletes.set(t.stamp?.row ?? t.entity, t);
    const inserts = batch.insert ?? [];
    if (updates.size === 0 && deletes.size === 0) {
      if (inserts.length === 0) return;
      if (this.key !== null) yield* this.checkKeys(this.entities, inserts, true);
      // One push per entity: spreading a caller-sized array into push() overflows the stack past ~100k.
      for (const e of inserts) this.entities.push(e);
      this.follow({ inserted: inserts });
      return;
    }
    let found = 0;
    const next: Entity[] = [];
    const changed: Entity[] = [];
    const replaced: Array<[Entity, Entity]> = [];
    const removed: Entity[] = [];
    for (const e of this.entities) {
      const row = STAMPS.get(e)?.row;
      const target = (row !== undefined && (deletes.get(row) ?? updates.get(row)?.target)) || deletes.get(e) || updates.get(e)?.target;
      if (target === undefined) {
        next.push(e);
        continue;
      }
      if (target.stamp !== undefined ? target.stamp.version !== STAMPS.get(e)?.version : target.entity !== e) throw stale();
      found++;
      const update = deletes.has(target.stamp?.row ?? target.entity) ? undefined : updates.get(target.stamp?.row ?? target.entity);
      if (update === undefined) {
        removed.push(e);
        continue;
      }
      if (row !== undefined) STAMPS.set(update.value, new MemoryStamp(row, version()));
      next.push(update.value);
      replaced.push([e, update.value]);
      if (this.key !== null && keyIdentity(update.value, this.key) !== keyIdentity(e, this.key)) changed.push(update.value);
    }
    if (found !== updates.size + deletes.size) throw stale();
    if (this.key !== null) yield* this.checkKeys(next, changed.concat(inserts), false);
    for (const e of inserts) next.push(e);
    this.entities = next;
    this.follow({ updated: replaced, deleted: removed, inserted: inserts });
  }

  /** Brings the indexes up to date with a write, in the turn it becomes visible. */
  private follow(change: IndexedChange): void {
    if (this.index !== null && !this.index.empty) this.index.apply(change);
    for (const index of this.orders) index.apply(change);
  }

  /**
   * Conflict when one of `written` (already in `stored` or not) shares its key with another
   * entity. `indexed`: `stored` is what the index describes, so a one-property key is
   * looked up there instead of scanning every stored entity. Yields every KEYS_PER_SLICE
   * entities looked at.
   */
  private *checkKeys(stored: readonly Entity[], written: readonly Entity[], indexed: boolean): Generator<void, void, void> {
    const key = this.key!;
    const wanted = new Map<unknown, Entity>();
    let seen = 0;
    for (const e of written) {
      if (++seen % KEYS_PER_SLICE === 0) yield;
      const id = keyIdentity(e, key);
      if (id === undefined) continue;
      if (wanted.has(id)) throw keyTaken(key, e);
      wanted.set(id, e);
    }
    if (wanted.size === 0) return;
    if (indexed && key.length === 1 && stored.length >= INDEXED_FROM && this.index !== null) {
      // Built here at the first keyed write past INDEXED_FROM entities: a slice at a time.
      yield* this.index.building(key[0], KEYS_PER_SLICE);
      const looked = yield* this.checkIndexed(this.index, key[0], wanted);
      if (looked) return;
    }
    for (const e of stored) {
      if (++seen % KEYS_PER_SLICE === 0) yield;
      const other = wanted.get(keyIdentity(e, key));
      if (other !== undefined && other !== e) throw keyTaken(key, e);
    }
  }

  /**
   * `checkKeys` through the index: true when every wanted key was looked up (a Conflict is
   * thrown for a taken one), false when one is a value the index does not hold (scan).
   */
  private *checkIndexed(index: EqualityIndex, property: string, wanted: Map<unknown, Entity>): Generator<void, boolean, void> {
    const key = this.key!;
    let seen = 0;
    for (const [id, e] of wanted) {
      if (++seen % KEYS_PER_SLICE === 0) yield;
      const holders = index.holding(property, id);
      if (holders === undefined) return false;
      for (const h of holders) if (h !== e && keyIdentity(h, key) === id) throw keyTaken(key, h);
    }
    return true;
  }

  /** A snapshot of every entity in storage order. */
  all(): readonly Entity[] {
    return this.entities;
  }
}

/** The rest of a write begun in slices: one slice a turn (util/turn.ts). */
async function finish(steps: Generator<void, void, void>): Promise<void> {
  for (;;) {
    await nextTurn();
    if (steps.next().done) return;
  }
}

const noop = () => undefined;

const stale = () => new ServiceError('Conflict', 'The entities to change were changed by another request; nothing was written');
