import type { Locator, SelectQuery } from '@resourcery/core/storage';
import { ASCII, textOf, valueOf } from './indexes.js';
import { storable, valueSql, type Params } from './translate.js';

type Search = NonNullable<SelectQuery['search']>;

export interface SearchSql {
  /** A test on the table's row (`r`). */
  sql: string;
  /** False when the test keeps a superset of the matches, which the service checks again. */
  exact: boolean;
  /**
   * Set when the test is exact but for rows whose scope holds an object, an array or a
   * number JavaScript writes with an exponent (jsonb does not keep `JSON.stringify`'s
   * text of those, so they are kept on a test of the whole JSON text instead): those rows,
   * as a test on `r` made with the parameters given. The storage asks the table whether
   * any exists; while none does, the search is exact.
   */
  approximate?: (params: Params) => string;
}

/**
 * The `search` meta-condition as a test on the row, as the service's search (core
 * query/search.ts): the entity's JSON text, which `body` holds as the storage wrote it, or
 * with a scope the scope's value (a string as it is, anything else as `JSON.stringify`
 * writes it, nothing for null or missing); lower-cased by JavaScript unless case-sensitive.
 * Exact for case-sensitive needles and for needles that are ASCII once lower-cased (see
 * textTest); a superset, which the service narrows, otherwise.
 */
export function searchSql(search: Search, params: Params): SearchSql {
  const { pattern, scope, caseSensitive } = search;
  if (pattern === '') return { sql: 'TRUE', exact: true };
  // A lone surrogate may match half of a stored pair: no test (NUL is never stored).
  if (!storable(pattern)) return { sql: 'TRUE', exact: false };
  const needle = caseSensitive ? pattern : pattern.toLowerCase();
  const inBody = (p: Params, text = needle) => textTest('r.body', text, caseSensitive, p);
  if (scope === null) return inBody(params);
  const value = valueSql(scope, params);
  if (value === null) {
    // A scope SQL cannot read: its value's JSON text lies in the body, a string's escaped.
    // Only `.length` makes a value the body does not hold.
    if (scope.segments.some((s) => s.toLowerCase() === 'length')) return { sql: 'TRUE', exact: false };
    const escaped = JSON.stringify(needle).slice(1, -1);
    const tests = [inBody(params), ...(escaped === needle ? [] : [inBody(params, escaped)])];
    return { sql: `(${tests.map((t) => t.sql).join(' OR ')})`, exact: false };
  }
  const v = 'q.v';
  const string = textTest(`(${v} #>> '{}')`, needle, caseSensitive, params);
  const plain = textTest(`(${v})::text`, needle, caseSensitive, params).sql;
  const body = inBody(params).sql;
  const sql =
    `(SELECT CASE jsonb_typeof(${v}) WHEN 'string' THEN ${string.sql} WHEN 'boolean' THEN ${plain} ` +
    `WHEN 'number' THEN CASE WHEN ${plainNumber(v)} THEN ${plain} ELSE ${numberMayHold(needle)} AND ${body} END ` +
    `WHEN 'object' THEN ${body} WHEN 'array' THEN ${body} ELSE FALSE END FROM (SELECT ${value} AS v OFFSET 0) q)`;
  if (!string.exact) return { sql, exact: false };
  // Such a value's text lies in the body (a number with an exponent is never a `.length`),
  // so the body test comes first: a trigram index on body can serve it.
  const approximate = (p: Params) => {
    const number = numberMayHold(needle) === 'TRUE' ? `NOT (${plainNumber(v)})` : 'FALSE';
    const kept = `(SELECT CASE jsonb_typeof(${v}) WHEN 'object' THEN TRUE WHEN 'array' THEN TRUE WHEN 'number' THEN ${number} ELSE FALSE END FROM (SELECT ${valueSql(scope, p)!} AS v OFFSET 0) q)`;
    return `${inBody(p).sql} AND ${kept}`;
  };
  return { sql, exact: true, approximate };
}

/** A jsonb number whose text is JavaScript's (no exponent: 1e-6 <= |n| < 1e21, or 0; the body's numbers are JavaScript's). */
const plainNumber = (v: string) => `(abs((${v})::numeric) < 1e21 AND ((${v})::numeric = 0 OR abs((${v})::numeric) >= 0.000001))`;

/** Whether a number's text can hold the needle at all (digits, `.`, `e`, `+`, `-`): kept for the service then. */
const numberMayHold = (needle: string) => (/^[0-9.e+-]*$/.test(needle) ? 'TRUE' : 'FALSE');

/**
 * `text` contains `needle` (lower-cased by the caller unless case-sensitive). Ignoring
 * case, JavaScript lower-cases the whole text; only ASCII letters and two other
 * characters lower-case into ASCII, KELVIN SIGN (to `k`) and DOTTED CAPITAL I (to `i` +
 * U+0307), which are mapped first; lower() under "C" then folds ASCII alone. So a needle
 * that is ASCII is found exactly. Another needle is prefiltered: each of its maximal ASCII
 * runs must be in the folded text, and each other character, or one that lower-cases to
 * it, in the text (a superset).
 */
function textTest(text: string, needle: string, caseSensitive: boolean, params: Params): { sql: string; exact: boolean } {
  if (caseSensitive) return { sql: `strpos(${text}, ${params.add(needle)}) > 0`, exact: true };
  if (ASCII.test(needle)) return { sql: asciiTest(text, needle, params), exact: true };
  // eslint-disable-next-line no-control-regex -- the whole ASCII range
  const tests = (needle.match(/[\x00-\x7f]+/g) ?? []).map((run) => asciiTest(text, run, params));
  // eslint-disable-next-line no-control-regex -- the whole ASCII range
  const others = [...new Set(needle.replace(/[\x00-\x7f]+/g, ''))].slice(0, MAX_CHARACTERS);
  for (const c of others) tests.push(`(${[c, ...lowerSources(c)].map((x) => `strpos(${text}, ${params.add(x)}) > 0`).join(' OR ')})`);
  return { sql: tests.length === 0 ? 'TRUE' : `(${tests.join(' AND ')})`, exact: false };
}

/** Enough to narrow a search; more characters would only lengthen the SQL. */
const MAX_CHARACTERS = 8;

function asciiTest(text: string, needle: string, params: Params): string {
  // Without `k` and `i` in the needle only ASCII letters can match it, and ILIKE folds
  // those in every locale (and a trigram index on body can serve it).
  if (!/[ki]/.test(needle)) return `${text} ILIKE ${params.add(`%${needle.replace(/[\\%_]/g, '\\$&')}%`)}`;
  return `strpos(lower(replace(translate(${text}, chr(8490), 'k'), chr(304), 'i' || chr(775)) COLLATE "C"), ${params.add(needle)}) > 0`;
}

let sources: Map<string, string[]> | null = null;

/**
 * The characters whose lower case holds `c` (`Σ` for `σ` and, as a final sigma, for `ς`).
 * Made once, over planes 0 and 1, where every cased letter is.
 */
export function lowerSources(c: string): string[] {
  if (sources === null) {
    sources = new Map([['ς', ['Σ']]]);
    for (let cp = 0x80; cp < 0x20000; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue;
      const x = String.fromCodePoint(cp);
      const lower = x.toLowerCase();
      if (lower === x) continue;
      for (const y of new Set(lower)) {
        const list = sources.get(y);
        if (list === undefined) sources.set(y, [x]);
        else list.push(x);
      }
    }
  }
  return sources.get(c) ?? [];
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
