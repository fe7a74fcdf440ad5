import type { Locator, SelectQuery } from '@resourcery/core/storage';
import { textOf, valueOf } from './indexes.js';
import { storable, type Params } from './translate.js';

// eslint-disable-next-line no-control-regex -- the whole ASCII range
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The `search` meta-condition as a test on the row, or null when SQL cannot answer it
 * exactly. Without a scope the service searches `JSON.stringify(entity)`, which is what
 * `body` holds (written by the storage). Ignoring case, JavaScript lower-cases the whole
 * text: for a needle that is ASCII once lower-cased, only ASCII letters and two other
 * characters can lower-case into a match, KELVIN SIGN (to `k`) and DOTTED CAPITAL I (to
 * `i` + U+0307), which are mapped first; lower() under "C" then folds ASCII alone.
 * The search is applied with the conditions; ordering and paging stay exact.
 */
export function searchSql(search: NonNullable<SelectQuery['search']>, params: Params): string | null {
  if (search.scope !== null || !storable(search.pattern)) return null;
  if (search.caseSensitive) return `strpos(r.body, ${params.add(search.pattern)}) > 0`;
  const needle = search.pattern.toLowerCase();
  if (!ASCII.test(needle)) return null;
  // Without `k` and `i` in the needle only ASCII letters can match it, and ILIKE folds
  // those in every locale (and a trigram index on body can serve it).
  if (!/[ki]/.test(needle)) return `r.body ILIKE ${params.add(`%${needle.replace(/[\\%_]/g, '\\$&')}%`)}`;
  return `strpos(lower(replace(translate(r.body, chr(8490), 'k'), chr(304), 'i' || chr(775)) COLLATE "C"), ${params.add(needle)}) > 0`;
}

/**
 * What groups the rows for `distinct` on the selected properties, or null when SQL
 * cannot group exactly as the service's projection would: only properties of a declared
 * index (spelled as declared, so every row projects the same key). Groups may be finer
 * than the service's (1 and 1.0, a missing and a null value, each object or array on its
 * own): the service applies distinct again on what it projects.
 */
export function distinctKeys(locators: readonly Locator[], params: Params): string[] | null {
  const keys: string[] = [];
  for (const locator of locators) {
    const p = params.indexedProperty(locator);
    if (p === undefined) return null;
    if (p.type === 'string') keys.push(textOf(p));
    else if (p.type !== undefined) keys.push(valueOf(p));
    else {
      const v = valueOf(p);
      keys.push(`CASE WHEN jsonb_typeof(${v}) IN ('object', 'array') THEN 'r' || r.id::text ELSE ${v}::text END`);
    }
  }
  return keys;
}
