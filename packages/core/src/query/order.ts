/**
 * A total order over JSON values: null/missing < booleans < numbers < strings < the
 * rest; numbers numerically, strings by code point. Sorting is stable.
 */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0 || ra === 4) return 0;
  return a! < b! ? -1 : a! > b! ? 1 : 0;
}

function rank(v: unknown): number {
  switch (typeof v) {
    case 'undefined': return 0;
    case 'boolean': return 1;
    case 'number': return Number.isNaN(v) ? 0 : 2;
    case 'string': return 3;
    default: return v === null ? 0 : 4;
  }
}

interface Keyed<T> {
  key: unknown;
  index: number;
  item: T;
}

function comparator(descending: boolean) {
  return descending
    ? <T>(a: Keyed<T>, b: Keyed<T>) => compareValues(b.key, a.key) || a.index - b.index
    : <T>(a: Keyed<T>, b: Keyed<T>) => compareValues(a.key, b.key) || a.index - b.index;
}

export function sortEntities<T>(items: T[], key: (item: T) => unknown, descending: boolean): T[] {
  const keyed = items.map((item, index) => ({ key: key(item), index, item }));
  keyed.sort(comparator(descending));
  return keyed.map((k) => k.item);
}

/**
 * Sorted items[offset, offset + limit) without sorting everything: when the page is
 * small, keep only the best offset + limit items seen so far (binary insertion).
 */
export function selectRange<T>(items: T[], key: (item: T) => unknown, descending: boolean, offset: number, limit: number): T[] {
  const k = offset >= 0 && limit >= 0 ? offset + limit : -1;
  if (k < 0 || k * 8 > items.length) return slice(sortEntities(items, key, descending), offset, limit);
  if (k === 0) return [];
  const cmp = comparator(descending);
  const best: Keyed<T>[] = [];
  for (let index = 0; index < items.length; index++) {
    const candidate = { key: key(items[index]), index, item: items[index] };
    if (best.length === k && cmp(candidate, best[k - 1]) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(best[mid], candidate) <= 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, candidate);
    if (best.length > k) best.pop();
  }
  return best.slice(offset).map((b) => b.item);
}

export function slice<T>(items: T[], offset: number, limit: number): T[] {
  const start = offset >= 0 ? offset : Math.max(0, items.length + offset);
  const end = limit < 0 ? items.length : Math.min(items.length, start + limit);
  return start === 0 && end === items.length ? items : items.slice(start, end);
}
