import { Locator } from '../grammar/locator.js';
import { compareKeys } from '../query/order.js';
import { nextTurn } from '../util/turn.js';
import type { IndexedChange } from './equality-index.js';
import type { Entity, SelectQuery } from './storage.js';

/** A write of at most this many changes is spliced in; a larger one is merged in one pass. */
const SPLICE_MAX = 64;

/**
 * With a predicate, the walk in index order reads at most this share of the entities
 * (plus WALK_MIN) before it leaves the query to the scan: a condition few entities meet
 * would make it read most of them out of storage order.
 */
const WALK_SHARE = 8;
const WALK_MIN = 4096;

/** Entries a slice of the first sort reads or merges; runs of RUN entries are sorted a slice each. */
const SLICE = 16384;
const RUN = 4096;
/** Up to this many entities the first sort is done at once. */
const SORTED_AT_ONCE = 8192;

/**
 * A MemoryStorage index over the properties a resource declares (`indexes: [['Age',
 * 'Name']]`, docs/storage.md#indexes): the entities sorted by those properties in turn,
 * ascending under the service's comparison (compareKeys), ties in storage order. It
 * answers an order on exactly those properties, all ascending or all descending (ties
 * still in storage order), by reading the page off the sorted list instead of scanning
 * every entity: `limit` entities (or, with conditions, the entities walked until the page
 * is full). Sorted when declared (in slices when large, the scan answering meanwhile),
 * then kept up to date by every write in the turn the write becomes visible.
 */
export class OrderIndex {
  private readonly locators: readonly Locator[];
  private readonly lower: readonly string[];
  /** The entities in index order, and beside each its place in storage order; null until sorted. */
  private sorted: Entity[] | null = null;
  private places: number[] = [];
  /** The next entity appended to storage comes after every place handed out. */
  private nextPlace = 0;
  /** Entities spelling an indexed property other than as declared: only the declared spelling is then served. */
  private misspelt = 0;
  /** While sorting in slices: the writes made meanwhile, to replay; null otherwise. */
  private pending: IndexedChange[] | null = null;
  /** Counts sorts begun and dropped: a sort whose generation is past is abandoned. */
  private generation = 0;

  constructor(
    readonly names: readonly string[],
    private readonly stored: () => readonly Entity[],
  ) {
    this.locators = names.map((n) => new Locator(n));
    this.lower = names.map((n) => n.toLowerCase());
  }

  /** The page `query` asks for, read off the index; undefined when this index does not serve its order. */
  page(query: SelectQuery): Entity[] | undefined {
    const order = query.order;
    if (order === null || (query.thenBy?.length ?? 0) !== this.names.length - 1) return undefined;
    const keys = query.thenBy === undefined ? [order] : [order, ...query.thenBy];
    for (let i = 0; i < keys.length; i++) {
      const l = keys[i].locator;
      if (keys[i].descending !== order.descending || l.isDotted || l.text.toLowerCase() !== this.lower[i]) return undefined;
    }
    const sorted = this.build();
    if (sorted === undefined) return undefined;
    if (this.misspelt > 0 && keys.some((k, i) => k.locator.text !== this.names[i])) return undefined;
    const { predicate, offset, limit } = query;
    if (limit === 0) return [];
    if (predicate === null) {
      if (!order.descending) return sorted.slice(offset, limit < 0 ? undefined : offset + limit);
      return this.descendingPage(offset, limit);
    }
    const budget = limit < 0 ? Infinity : WALK_MIN + sorted.length / WALK_SHARE;
    const out: Entity[] = [];
    let skip = offset;
    let walked = 0;
    const take = (e: Entity): boolean => {
      if (!predicate(e)) return false;
      if (skip > 0) skip--;
      else out.push(e);
      return out.length === limit;
    };
    if (!order.descending) {
      for (const e of sorted) {
        if (take(e) || ++walked > budget) break;
      }
    } else {
      // From the back a group of equal keys at a time, each group in storage order.
      let end = sorted.length;
      while (end > 0 && out.length !== limit && walked <= budget) {
        const [start] = this.group(end - 1);
        for (let i = start; i < end; i++) if (take(sorted[i])) break;
        walked += end - start;
        end = start;
      }
    }
    return out.length === limit || walked <= budget ? out : undefined;
  }

  /**
   * Entries [offset, offset + limit) of the descending order: the groups of equal keys from
   * the back, each in storage order. The entry `q` places from the front of it lies in the
   * group holding index n - 1 - q of the ascending list, so the page starts there.
   */
  private descendingPage(offset: number, limit: number): Entity[] {
    const sorted = this.sorted!;
    const n = sorted.length;
    const out: Entity[] = [];
    for (let q = offset; q < n && out.length !== limit; ) {
      const [start, end] = this.group(n - 1 - q);
      for (let i = start + q - (n - end); i < end && out.length !== limit; i++, q++) out.push(sorted[i]);
    }
    return out;
  }

  /** The group of entries with the keys of entry `at`: [start, end), found by galloping out from it. */
  private group(at: number): [number, number] {
    const sorted = this.sorted!;
    const keys = this.keysOf(sorted[at]);
    const same = (i: number) => compareLists(keys, this.keysOf(sorted[i])) === 0;
    let step = 1;
    let lo = at; // lo: same, lo - step probed next
    while (lo - step >= 0 && same(lo - step)) {
      lo -= step;
      step *= 2;
    }
    let below = Math.max(-1, lo - step); // not same (or -1)
    while (lo - below > 1) {
      const mid = (lo + below) >>> 1;
      if (same(mid)) lo = mid;
      else below = mid;
    }
    step = 1;
    let hi = at;
    while (hi + step < sorted.length && same(hi + step)) {
      hi += step;
      step *= 2;
    }
    let above = Math.min(sorted.length, hi + step);
    while (above - hi > 1) {
      const mid = (hi + above) >>> 1;
      if (same(mid)) hi = mid;
      else above = mid;
    }
    return [lo, hi + 1];
  }

  /** Begins the sort (done at once for a small resource, else in slices from the next turn on). */
  prepare(): void {
    this.build();
  }

  /** Follows one write: spliced in when small, merged in one pass when large (kept for later while sorting). */
  apply(change: IndexedChange): void {
    if (change.replaced) return this.forget();
    if (this.pending !== null) return void this.pending.push(change);
    if (this.sorted === null) return;
    const updated = change.updated ?? [];
    const deleted = change.deleted ?? [];
    const inserted = change.inserted ?? [];
    if (updated.length * 2 + deleted.length + inserted.length > SPLICE_MAX) return this.merge(updated, deleted, inserted);
    for (const [before, after] of updated) {
      const at = this.find(before);
      if (at < 0) return this.forget();
      if (this.compare(before, after) === 0) {
        this.sorted[at] = after;
        this.misspelt += this.spelling(after) - this.spelling(before);
        continue;
      }
      const place = this.places[at];
      this.remove(at);
      this.insert(after, place);
    }
    for (const e of deleted) {
      const at = this.find(e);
      if (at < 0) return this.forget();
      this.remove(at);
    }
    for (const e of inserted) this.insert(e, this.nextPlace++);
  }

  /**
   * The sorted entries, or undefined while they are being sorted. A resource of at most
   * SORTED_AT_ONCE entities is sorted in the caller's turn; a larger one in slices, one a
   * turn (util/turn.ts), from a copy of the entity list taken when the sort begins: until it
   * is done the scan answers, and the writes made meanwhile are replayed on it when it is.
   */
  private build(): Entity[] | undefined {
    if (this.sorted !== null) return this.sorted;
    if (this.pending !== null) return undefined;
    const snapshot = this.stored().slice();
    const steps = this.sorting(snapshot);
    if (snapshot.length <= SORTED_AT_ONCE) {
      let step = steps.next();
      while (!step.done) step = steps.next();
      this.built(snapshot, step.value);
      return this.sorted!;
    }
    const generation = ++this.generation;
    this.pending = [];
    void (async () => {
      // Not in this request's turn: it is answered by the scan at once.
      let step: IteratorResult<void, { order: number[]; misspelt: number }>;
      do {
        await nextTurn();
        if (generation !== this.generation) return;
        step = steps.next();
      } while (!step.done);
      const changes = this.pending!;
      this.pending = null;
      this.built(snapshot, step.value);
      for (const change of changes) this.apply(change);
    })();
    return undefined;
  }

  private built(snapshot: readonly Entity[], { order, misspelt }: { order: number[]; misspelt: number }): void {
    this.sorted = order.map((i) => snapshot[i]);
    this.places = order;
    this.nextPlace = snapshot.length;
    this.misspelt = misspelt;
  }

  /**
   * A stable sort of `entities` by the indexed values: one column of values per property,
   * runs of RUN positions sorted (a run a slice), then merged pairwise; yields every SLICE
   * entries read or merged.
   */
  private *sorting(entities: readonly Entity[]): Generator<void, { order: number[]; misspelt: number }, void> {
    const n = entities.length;
    // Allocated at their size once: arrays grown by push are copied as they grow, and in a
    // large heap that much allocation brings on full collections that pause the loop.
    const columns = this.locators.map(() => new Array<unknown>(n));
    let order = new Array<number>(n);
    let misspelt = 0;
    for (let i = 0; i < n; i++) {
      const e = entities[i];
      order[i] = i;
      for (let k = 0; k < columns.length; k++) columns[k][i] = this.locators[k].get(e);
      misspelt += this.spelling(e);
      if ((i + 1) % SLICE === 0) yield;
    }
    const before = (a: number, b: number) => {
      for (const column of columns) {
        const c = compareKeys(column[a], column[b]);
        if (c !== 0) return c < 0;
      }
      return a < b;
    };
    for (let start = 0; start < n; start += RUN) {
      const run = order.slice(start, start + RUN).sort((a, b) => (before(a, b) ? -1 : 1));
      for (let j = 0; j < run.length; j++) order[start + j] = run[j];
      yield;
    }
    let into = order.slice();
    let work = 0;
    for (let width = RUN; width < n; width *= 2) {
      for (let lo = 0; lo < n; lo += 2 * width) {
        const mid = Math.min(lo + width, n);
        const hi = Math.min(lo + 2 * width, n);
        let a = lo;
        let b = mid;
        for (let k = lo; k < hi; k++) {
          into[k] = b >= hi || (a < mid && !before(order[b], order[a])) ? order[a++] : order[b++];
          if (++work % SLICE === 0) yield;
        }
      }
      [order, into] = [into, order];
    }
    return { order, misspelt };
  }

  private forget(): void {
    this.sorted = null;
    this.places = [];
    this.pending = null;
    this.generation++;
  }

  private keysOf(e: Entity): unknown[] {
    return this.locators.map((l) => l.get(e));
  }

  /** Index order of two entities, by the indexed properties alone. */
  private compare(a: Entity, b: Entity): number {
    for (const l of this.locators) {
      const c = compareKeys(l.get(a), l.get(b));
      if (c !== 0) return c;
    }
    return 0;
  }

  /** The first position whose entry comes after `e` at `place` (entries before it sort before or equal). */
  private position(e: Entity, place: number): number {
    const sorted = this.sorted!;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.compare(sorted[mid], e) || this.places[mid] - place;
      if (c <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Where a stored entity is: among those with its keys, the one that is this object (-1: not held). */
  private find(e: Entity): number {
    const sorted = this.sorted!;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(sorted[mid], e) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < sorted.length; i++) if (sorted[i] === e) return i;
    return -1;
  }

  private remove(at: number): void {
    this.misspelt -= this.spelling(this.sorted![at]);
    this.sorted!.splice(at, 1);
    this.places.splice(at, 1);
  }

  private insert(e: Entity, place: number): void {
    const at = this.position(e, place);
    this.sorted!.splice(at, 0, e);
    this.places.splice(at, 0, place);
    this.misspelt += this.spelling(e);
  }

  /** A large write: the entries left, then the new ones (sorted) merged in by binary search. */
  private merge(updated: ReadonlyArray<readonly [Entity, Entity]>, deleted: readonly Entity[], inserted: readonly Entity[]): void {
    const gone = new Set<Entity>(deleted);
    const after = new Map<Entity, Entity>();
    for (const [b, a] of updated) {
      gone.add(b);
      after.set(b, a);
    }
    const sorted: Entity[] = [];
    const places: number[] = [];
    const added: Array<{ keys: unknown[]; place: number; e: Entity }> = [];
    const old = this.sorted!;
    for (let i = 0; i < old.length; i++) {
      const e = old[i];
      if (!gone.has(e)) {
        sorted.push(e);
        places.push(this.places[i]);
        continue;
      }
      this.misspelt -= this.spelling(e);
      const value = after.get(e);
      if (value !== undefined) added.push({ keys: this.keysOf(value), place: this.places[i], e: value });
    }
    for (const e of inserted) added.push({ keys: this.keysOf(e), place: this.nextPlace++, e });
    added.sort((a, b) => compareLists(a.keys, b.keys) || a.place - b.place);
    this.sorted = sorted;
    this.places = places;
    const merged: Entity[] = [];
    const mergedPlaces: number[] = [];
    let from = 0;
    for (const a of added) {
      const at = this.position(a.e, a.place);
      for (; from < at; from++) {
        merged.push(sorted[from]);
        mergedPlaces.push(places[from]);
      }
      merged.push(a.e);
      mergedPlaces.push(a.place);
      this.misspelt += this.spelling(a.e);
    }
    for (; from < sorted.length; from++) {
      merged.push(sorted[from]);
      mergedPlaces.push(places[from]);
    }
    this.sorted = merged;
    this.places = mergedPlaces;
  }

  /** 1 when the entity has a key that is an indexed name in another spelling (`age` for `Age`). */
  private spelling(e: Entity): number {
    for (const key in e) {
      for (let i = 0; i < this.names.length; i++) {
        if (key.length === this.names[i].length && key !== this.names[i] && key.toLowerCase() === this.lower[i]) return 1;
      }
    }
    return 0;
  }
}

function compareLists(a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareKeys(a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}
