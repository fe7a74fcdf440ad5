import type { ConditionItem, SelectQuery } from '@resourcery/core/storage';
import type { Query } from './client.js';
import { ASCII, pgArray } from './indexes.js';
import { equalValues, sendable, type Params } from './translate.js';

/**
 * The paths that address entities by their key, served by the key column's unique index
 * (key-column.ts) whether or not the resource declares an index (docs/storage.md#keys):
 * `/R/<key>`, `/R/id=<key>`, `Id=1|2|3`, safepost's per-value matches (`=` selects), and
 * an order by a whole-number key. A key test only narrows: the condition's own test still
 * runs on the rows the index finds, so the answer is the one the conditions give.
 *
 * The column holds each entity's key as the service reads it (the exact spelling, else
 * the first spelled otherwise in case); it is trusted only while no stored row holds a
 * key the column lacks (rows written behind the storage's back: keyColumnComplete).
 */

/** More combinations than this (a composite key's IN lists multiplied) are not narrowed. */
const MAX_KEYS = 1000;

/** The key property (its index in `key`) a locator names, ignoring case; -1 for none. */
function keyIndexOf(locator: { segments: readonly string[]; text: string }, lowers: readonly string[]): number {
  return locator.segments.length === 1 ? lowers.indexOf(locator.text.toLowerCase()) : -1;
}

/**
 * A test on the key column the rows the conditions keep all pass: `r.key = ANY(...)` of
 * every key the `=` conditions (and lists of them) on the key properties allow, or null
 * when they leave some key property open.
 */
export function keyTest(conditions: readonly ConditionItem[], key: readonly string[], params: Params): string | null {
  const lowers = key.map((k) => k.toLowerCase());
  if (!lowers.every((k) => ASCII.test(k))) return null;
  const allowed: Array<Set<string> | null> = key.map(() => null);
  for (const item of conditions) {
    const alternatives = 'anyOf' in item ? item.anyOf : [item];
    const i = keyIndexOf(alternatives[0].locator, lowers);
    if (i < 0) continue;
    const values = new Set<string>();
    let open = false;
    for (const c of alternatives) {
      const texts = c.op === '=' && keyIndexOf(c.locator, lowers) === i && sendable(c.value) ? equalValues(c.value) : null;
      if (texts === null) open = true;
      else for (const t of texts) values.add(t);
    }
    if (open) continue;
    const before = allowed[i];
    allowed[i] = before === null ? values : new Set([...values].filter((v) => before.has(v)));
  }
  if (allowed.some((a) => a === null)) return null;
  let keys: string[][] = [[]];
  for (const values of allowed as Array<Set<string>>) {
    keys = keys.flatMap((k) => [...values].map((v) => [...k, v]));
    if (keys.length > MAX_KEYS) return null;
  }
  return `r.key = ANY((${params.add(pgArray(keys.map((k) => `[${k.join(',')}]`)))})::jsonb[])`;
}

/** Whether the order is by the key itself (a one-property key), which the key column can give. */
export function ordersByKey(query: Pick<SelectQuery, 'order' | 'thenBy'>, key: readonly string[] | null): boolean {
  if (key === null || key.length !== 1 || query.order === null || (query.thenBy?.length ?? 0) > 0) return false;
  return ASCII.test(key[0]) && keyIndexOf(query.order.locator, [key[0].toLowerCase()]) === 0;
}

/**
 * The key order as `ORDER BY r.key`, with a guard evaluated once by the statement (an
 * InitPlan: three reads of the key index): jsonb sorts numbers as the service does, but
 * strings, booleans and missing keys otherwise, so the statement returns rows only while
 * every row has a key and the smallest and the largest are numbers. When it returns none
 * the caller asks again without it (plan's `keyOrdered`).
 */
export function keyOrderGuard(quoted: string): string {
  const end = (dir: string) => `(SELECT jsonb_typeof(key -> 0) FROM ${quoted} WHERE key IS NOT NULL ORDER BY key${dir} LIMIT 1)`;
  return `(NOT EXISTS (SELECT 1 FROM ${quoted} WHERE key IS NULL) AND coalesce(${end('')} = 'number' AND ${end(' DESC')} = 'number', TRUE))`;
}

/**
 * Whether every stored row that has all the key's values has them in the key column
 * (the rows without a key are found through its index, which holds NULLs): false when
 * rows were written behind the storage's back, and then the key column narrows nothing.
 */
export async function keyColumnComplete(query: Query, quoted: string, key: readonly string[]): Promise<boolean> {
  const lowers = key.map((k) => k.toLowerCase());
  if (!lowers.every((k) => ASCII.test(k))) return false;
  const has = (i: number) =>
    `EXISTS (SELECT 1 FROM jsonb_each(r.doc) f WHERE lower(translate(f.key, chr(8490), 'k') COLLATE "C") = ($1::text::text[])[${i + 1}] AND f.value <> 'null'::jsonb)`;
  const [{ missing }] = await query<{ missing: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${quoted} r WHERE r.key IS NULL AND ${lowers.map((_, i) => has(i)).join(' AND ')}) AS missing`,
    [pgArray(lowers)],
  );
  return !missing;
}
