import { Locator } from '../grammar/locator.js';
import { sortInSlices } from '../query/large.js';
import { compareKeys, sortEntities } from '../query/order.js';
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

/** Up to this many entities the first sort is done at once; beyond, in slices (sortInSlices). */
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
    const { order, thenBy } = query;
    if (order === null || (thenBy?.length ?? 0) !== this.names.length - 1) return undefined;
    // Read as declared: every key's spelling, unless some entity spells a property otherwise.
    let declared = true;
    for (let i = 0; i < this.names.length; i++) {
      const k = i === 0 ? order : thenBy![i - 1];
      if (k.descending !== order.descending || k.locator.isDotted || k.locator.text.toLowerCase() !== this.lower[i]) return undefined;
      if (k.locator.text !== this.names[i]) declared = false;
    }
    const sorted = this.build();
    if (sorted === undefined || (this.misspelt > 0 && !declared)) return undefined;
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
    const same = (i: number) => this.compare(sorted[at], sorted[i]) === 0;
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
    // Positions in storage order, sorted stably by the indexed values: ties keep that order.
    // The sort reads each entity's key once, and the spellings are counted as it does.
    const positions = Array.from(snapshot.keys());
    let misspelt = 0;
    const values = this.locators.length === 1 ? (e: Entity) => this.locators[0].get(e) : (e: Entity) => this.locators.map((l) => l.get(e));
    const key = (i: number) => {
      misspelt += this.spelling(snapshot[i]);
      return values(snapshot[i]);
    };
    // Every property ascending (a descending order reads the index backwards).
    const descending = this.locators.length === 1 ? false : this.locators.map(() => false);
    if (snapshot.length <= SORTED_AT_ONCE) {
      this.built(snapshot, sortEntities(positions, key, descending), misspelt);
      return this.sorted!;
    }
    const generation = ++this.generation;
    this.pending = [];
    void sortInSlices(positions, key, descending).then((order) => {
      if (generation !== this.generation) return;
      const changes = this.pending!;
      this.pending = null;
      this.built(snapshot, order, misspelt);
      for (const change of changes) this.apply(change);
    });
    return undefined;
  }

  private built(snapshot: readonly Entity[], order: number[], misspelt: number): void {
    this.sorted = order.map((i) => snapshot[i]);
    this.places = order;
    this.nextPlace = snapshot.length;
    this.misspelt = misspelt;
  }

  private forget(): void {
    this.sorted = null;
    this.places = [];
    this.pending = null;
    this.generation++;
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
    const added: Array<{ place: number; e: Entity }> = [];
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
      if (value !== undefined) added.push({ place: this.places[i], e: value });
    }
    for (const e of inserted) added.push({ place: this.nextPlace++, e });
    added.sort((a, b) => this.compare(a.e, b.e) || a.place - b.place);
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
