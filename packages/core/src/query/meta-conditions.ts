import { ServiceError } from '../errors.js';
import type { MetaEntry, MetaKey } from '../grammar/parse.js';
import { Locator } from '../grammar/locator.js';

interface Rename {
  from: Locator;
  to: string;
}

/** One order key: a locator and its direction. */
export interface OrderKey {
  locator: Locator;
  descending: boolean;
}

/**
 * The typed meta-conditions of one request (docs/uri.md); when a name repeats, the last wins.
 * `order_asc` and `order_desc` take lists; the one written first gives the primary keys.
 */
export interface MetaConditions {
  unsafe: boolean;
  /** -1: no limit. */
  limit: number;
  /** Negative: keep the last N. */
  offset: number;
  /** Order keys by precedence; null for none (never empty). */
  order: readonly OrderKey[] | null;
  select: Locator[] | null;
  add: Locator[] | null;
  rename: Rename[] | null;
  distinct: boolean;
  search: string | null;
  searchRegex: string | null;
  safepost: Locator[] | null;
  /** `count=true`: the answer also says how many entities match before offset and limit. */
  count: boolean;
  /** `embed=Customer,Orders`: the relations whose entities go into each entity, as written (docs/relations.md). */
  embed: readonly string[] | null;
}

export const NO_META: MetaConditions = Object.freeze({
  unsafe: false,
  limit: -1,
  offset: 0,
  order: null,
  select: null,
  add: null,
  rename: null,
  distinct: false,
  search: null,
  searchRegex: null,
  safepost: null,
  count: false,
  embed: null,
});

export function toMetaConditions(entries: readonly MetaEntry[]): MetaConditions {
  if (entries.length === 0) return NO_META;
  const m: MetaConditions = { ...NO_META };
  // Each of order_asc and order_desc: its last occurrence, placed where it was written.
  const orders: Array<{ at: number; keys: OrderKey[] }> = [];
  entries.forEach(({ key, value }, at) => {
    if (key !== 'order_asc' && key !== 'order_desc') return apply(m, key, value);
    const descending = key === 'order_desc';
    const keys = list(key, value).map((l: Locator) => ({ locator: l, descending }));
    const known = orders.findIndex((o) => o.keys[0].descending === descending);
    if (known >= 0) orders.splice(known, 1);
    orders.push({ at, keys });
  });
  if (orders.length > 0) m.order = orders.sort((a, b) => a.at - b.at).flatMap((o) => o.keys);
  return m;
}

/**
 * The meta-conditions of a view or macro followed by the caller's: a caller that gives
 * any order replaces every order key the first set (docs/uri.md).
 */
export function joinMeta(first: readonly MetaEntry[], caller: readonly MetaEntry[]): MetaEntry[] {
  const ordered = caller.some((e) => e.key === 'order_asc' || e.key === 'order_desc');
  return [...(ordered ? first.filter((e) => e.key !== 'order_asc' && e.key !== 'order_desc') : first), ...caller];
}

function apply(m: MetaConditions, key: MetaKey, value: string): void {
  switch (key) {
    case 'unsafe':
      m.unsafe = bool(key, value);
      break;
    case 'distinct':
      m.distinct = bool(key, value);
      break;
    case 'count':
      m.count = bool(key, value);
      break;
    case 'limit':
      m.limit = int(key, value);
      if (m.limit < -1) bad(key, value, 'a whole number >= -1');
      break;
    case 'offset':
      m.offset = int(key, value);
      break;
    case 'select':
      m.select = list(key, value);
      break;
    case 'add':
      m.add = list(key, value);
      break;
    case 'safepost':
      m.safepost = list(key, value);
      break;
    case 'rename':
      m.rename = items(key, value).map((item) => renameItem(item, value));
      break;
    case 'search':
      m.search = nonEmpty(key, value);
      break;
    case 'embed':
      m.embed = items(key, value).map((name) => {
        if (!/^[\p{L}_][\p{L}\p{N}_]*$/u.test(name)) bad(key, value, 'a comma-separated list of relation names');
        return name;
      });
      break;
    case 'search_regex':
      m.searchRegex = nonEmpty(key, value);
      break;
  }
}

function bool(key: string, value: string): boolean {
  const v = value.toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  return bad(key, value, 'true or false');
}

function int(key: string, value: string): number {
  if (!/^-?\d{1,15}$/.test(value)) bad(key, value, 'a whole number');
  return Number(value);
}

const LOCATOR = /^[^.\s,][^,]*$/;

function locator(key: string, value: string): Locator {
  if (!LOCATOR.test(value) || value.split('.').some((s) => s === '')) bad(key, value, 'a property locator');
  return new Locator(value);
}

/** The comma-separated items of a list, as written. */
function items(key: string, value: string): string[] {
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) bad(key, value, 'a comma-separated list of property locators');
  return items;
}

function list(key: string, value: string): Locator[] {
  return items(key, value).map((s) => locator(key, s));
}

function renameItem(item: string, whole: string): Rename {
  const arrow = item.indexOf('->');
  const from = arrow < 0 ? '' : item.slice(0, arrow).trim();
  const to = arrow < 0 ? '' : item.slice(arrow + 2).trim();
  if (!from || !to) bad('rename', whole, 'a list of <property>-><new name>');
  return { from: locator('rename', from), to };
}

function nonEmpty(key: string, value: string): string {
  if (value === '') bad(key, value, 'a non-empty pattern');
  return value;
}

function bad(key: string, value: string, expected: string): never {
  throw new ServiceError('InvalidMetaConditionValueType', `Invalid value '${value}' for meta-condition '${key}': expected ${expected}`);
}
