/**
 * A total order over JSON values: null/missing < booleans < numbers < strings < the
 * rest; numbers numerically, strings by code point. Sorting is stable.
 */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0 || ra === 4) return 0;
  if (ra === 3) return compareStrings(a as string, b as string);
  return a! < b! ? -1 : a! > b! ? 1 : 0;
}

/**
 * Code point order, as UTF-8 bytes and SQL's C collation sort. JavaScript's `<` compares
 * UTF-16 units, which puts characters beyond U+FFFF (surrogate pairs) before U+E000-U+FFFF.
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x < 0xd800 || y < 0xd800 ? x - y : highUnitRank(x) - highUnitRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates (U+D800-U+DFFF) above U+E000-U+FFFF, where their code points are. */
function highUnitRank(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

function rank(v: unknown): number {
  switch (typeof v) {
    case 'undefined':
      return 0;
    case 'boolean':
      return 1;
    case 'number':
      return Number.isNaN(v) ? 0 : 2;
    case 'string':
      return 3;
    default:
      return v === null ? 0 : 4;
  }
}

export interface Keyed<T> {
  key: unknown;
  index: number;
  item: T;
}

/**
 * `descending` per key: one direction for a single key, or a list for a key that is a list
 * of values (several order keys, compared in turn, each in its own direction).
 */
export type Directions = boolean | readonly boolean[];

export function comparator(descending: Directions) {
  if (typeof descending !== 'boolean') {
    const signs = descending.map((d) => (d ? -1 : 1));
    return <T>(a: Keyed<T>, b: Keyed<T>) => {
      const x = a.key as unknown[];
      const y = b.key as unknown[];
      for (let i = 0; i < signs.length; i++) {
        const c = compareKeys(x[i], y[i]);
        if (c !== 0) return signs[i] * c;
      }
      return a.index - b.index;
    };
  }
  return descending
    ? <T>(a: Keyed<T>, b: Keyed<T>) => compareValues(b.key, a.key) || a.index - b.index
    : <T>(a: Keyed<T>, b: Keyed<T>) => compareValues(a.key, b.key) || a.index - b.index;
}

export function sortEntities<T>(items: T[], key: (item: T) => unknown, descending: Directions): T[] {
  const keyed = items.map((item, index) => ({ key: key(item), index, item }));
  keyed.sort(comparator(descending));
  return keyed.map((k) => k.item);
}

/**
 * Sorted items[offset, offset + limit) without sorting everything: when the page is near
 * either end, keep only the best items up to it (binary insertion), from the front, or
 * from the back in reverse order (`offset=N-10`); otherwise sort.
 */
export function selectRange<T>(
  items: T[],
  key: (item: T) => unknown,
  descending: Directions,
  offset: number,
  limit: number,
  first?: (item: T) => unknown,
): T[] {
  const n = items.length;
  const start = offset >= 0 ? Math.min(offset, n) : Math.max(0, n + offset);
  const end = limit < 0 ? n : Math.min(n, start + limit);
  if (end <= start) return [];
  const cmp = comparator(descending);
  // Several keys (`first` reads the first of them): an item whose first key alone puts it
  // after the last kept one is dropped before its key list is built.
  const sign = first !== undefined && typeof descending !== 'boolean' && descending[0] ? -1 : 1;
  const behind =
    first !== undefined && typeof descending !== 'boolean'
      ? (item: T, last: Keyed<T>) => sign * compareKeys(first(item), (last.key as unknown[])[0])
      : undefined;
  if (end * 8 <= n) return best(items, key, cmp, end, behind && ((item, last) => behind(item, last) > 0)).slice(start);
  // The reverse of the total order (key, then position) ranks the back of the sort first.
  if ((n - start) * 8 <= n)
    return best(items, key, (a, b) => cmp(b, a), n - start, behind && ((item, last) => behind(item, last) < 0))
      .reverse()
      .slice(0, end - start);
  return slice(sortEntities(items, key, descending), offset, limit);
}

/** The first `k` items under `cmp`, in order; `loses(item, last)`: the item surely comes after the last kept one. */
function best<T>(
  items: T[],
  key: (item: T) => unknown,
  cmp: (a: Keyed<T>, b: Keyed<T>) => number,
  k: number,
  loses?: (item: T, last: Keyed<T>) => boolean,
): T[] {
  const kept: Keyed<T>[] = [];
  for (let index = 0; index < items.length; index++) {
    if (loses !== undefined && kept.length === k && loses(items[index], kept[k - 1])) continue;
    const candidate = { key: key(items[index]), index, item: items[index] };
    if (kept.length === k && cmp(candidate, kept[k - 1]) >= 0) continue;
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(kept[mid], candidate) <= 0) lo = mid + 1;
      else hi = mid;
    }
    kept.splice(lo, 0, candidate);
    if (kept.length > k) kept.pop();
  }
  return kept.map((b) => b.item);
}

/** compareValues, with the common case of two numbers first. */
export function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number' && a === a && b === b) return a < b ? -1 : a > b ? 1 : 0;
  return compareValues(a, b);
}

/**
 * The first `k` items in stable key order, kept while items stream past: an item is
 * compared with the last kept one and dropped at once unless it belongs in the page, so
 * nothing is stored or allocated for the rest. Items must be offered in storage order.
 */
export class TopK<T> {
  readonly items: T[] = [];
  private readonly keys: unknown[] = [];
  private readonly sign: number;

  constructor(
    private readonly k: number,
    descending: boolean,
  ) {
    this.sign = descending ? -1 : 1;
  }

  offer(key: unknown, item: T): void {
    const { keys, items, sign } = this;
    const n = keys.length;
    // An equal key offered later sorts after the kept one (stable), so it loses the tie.
    if (n === this.k && (n === 0 || sign * compareKeys(key, keys[n - 1]) >= 0)) return;
    insertSorted(keys, items, key, item, this.k, sign);
  }
}

/**
 * Inserts `item` by `key` into a page kept sorted (after equal keys, so ties keep their
 * order), dropping the last item past `k`. Shared by TopK and the generated scans.
 */
export function insertSorted<T>(keys: unknown[], items: T[], key: unknown, item: T, k: number, sign: number): void {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sign * compareKeys(key, keys[mid]) < 0) hi = mid;
    else lo = mid + 1;
  }
  keys.splice(lo, 0, key);
  items.splice(lo, 0, item);
  if (keys.length > k) {
    keys.pop();
    items.pop();
  }
}

export function slice<T>(items: T[], offset: number, limit: number): T[] {
  const start = offset >= 0 ? offset : Math.max(0, items.length + offset);
  const end = limit < 0 ? items.length : Math.min(items.length, start + limit);
  return start === 0 && end === items.length ? items : items.slice(start, end);
}
