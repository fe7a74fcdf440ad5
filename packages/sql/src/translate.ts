import type { AnyOf, ConditionItem, IndexedProperty, Literal, Locator, Operator } from '@resourcery/core/storage';
import { dateTest } from './date-test.js';
import { ASCII, pgArray, textOf, valueOf } from './indexes.js';

/**
 * Conditions and order translated to PostgreSQL with the evaluator's rules (docs/uri.md,
 * core query/conditions.ts, grammar/locator.ts, query/order.ts). Request text never becomes SQL
 * source: every key and value is a bind parameter, always sent as text and cast in SQL.
 *
 * Values are read from the `doc jsonb` column into computed columns of a fenced
 * subquery (OFFSET 0), so each one is read once per row however often the tests and the
 * order use it. A missing value is SQL NULL, a JSON null is jsonb 'null'.
 */
export class Params {
  readonly values: string[] = [];
  /** Computed values: `<expression> AS c<n>`, one per locator text. */
  readonly columns: string[] = [];
  private readonly columnOf = new Map<string, string>();

  /** `indexed` names the declared index properties queries may read directly (core model/indexes.ts). */
  constructor(private readonly indexed: (lowerName: string) => IndexedProperty | undefined = () => undefined) {}

  /** The indexed property a locator reads: one segment naming it in any case (Locator's folding). */
  indexedProperty(locator: Locator): IndexedProperty | undefined {
    return locator.segments.length === 1 ? this.indexed(locator.text.toLowerCase()) : undefined;
  }

  /** A placeholder for the value, typed text. */
  add(value: string): string {
    this.values.push(value);
    return `$${this.values.length}::text`;
  }

  /** Forgets the parameters added after `mark` (a translation that was given up). */
  reset(mark: number): null {
    this.values.length = mark;
    return null;
  }

  /** The computed column (`s.c<n>`) holding the locator's value, or null when SQL cannot read it exactly. */
  column(locator: Locator): string | null {
    const known = this.columnOf.get(locator.text);
    if (known !== undefined) return known;
    const value = valueSql(locator, this);
    if (value === null) return null;
    return this.computed(value, locator.text);
  }

  /** A computed column holding `value` (reused for the same `text`). */
  computed(value: string, text: string): string {
    const name = `c${this.columns.length}`;
    this.columns.push(`${value} AS ${name}`);
    this.columnOf.set(text, `s.${name}`);
    return `s.${name}`;
  }
}

export interface ConditionsSql {
  /** Boolean tests over the computed values, to be joined with AND. */
  tests: string[];
  /** Boolean tests on the table's own row (`r.doc`), which its indexes can answer. */
  direct: string[];
  /** Every condition was translated exactly; otherwise the tests select a superset. */
  exact: boolean;
}

export function translateConditions(conditions: readonly ConditionItem[], params: Params): ConditionsSql {
  const out: ConditionsSql = { tests: [], direct: [], exact: true };
  for (const item of conditions) {
    if ('anyOf' in item) {
      anyOfSql(item, params, out);
      continue;
    }
    const { locator, op, value } = item;
    const indexed = sendable(value) ? params.indexedProperty(locator) : undefined;
    if (indexed !== undefined) {
      const test = indexedTest(indexed, op, value, params);
      out.direct.push(test.sql);
      if (!test.exact) out.exact = false;
      continue;
    }
    const column = sendable(value) ? params.column(locator) : null;
    if (column === null) {
      // Leaving a condition out selects a superset; the service applies it in memory.
      out.exact = false;
      continue;
    }
    const test = testSql(column, op, value, params);
    out.tests.push(test.sql);
    if (!test.exact) out.exact = false;
  }
  return out;
}

/**
 * An item with alternatives, as one OR of their tests: on the table's own row when every
 * alternative reads an indexed property (an IN list of a typed one is `= ANY(...)`, which
 * its index answers), else over computed columns. An alternative SQL cannot read leaves
 * the whole item to the service.
 */
function anyOfSql(item: AnyOf, params: Params, out: ConditionsSql): void {
  const alternatives = item.anyOf;
  if (!alternatives.every((c) => sendable(c.value))) {
    out.exact = false;
    return;
  }
  const indexed = alternatives.map((c) => params.indexedProperty(c.locator));
  let tests: Test[];
  if (indexed.every((p) => p !== undefined)) {
    const list = inListSql(item, indexed[0], params);
    if (list !== null) {
      out.direct.push(list);
      return;
    }
    tests = alternatives.map((c, i) => indexedTest(indexed[i], c.op, c.value, params));
    out.direct.push(`(${tests.map((t) => t.sql).join(' OR ')})`);
  } else {
    // Every column first: a parameter a column reads stays in use even when the item is given up.
    const columns = alternatives.map((c) => params.column(c.locator));
    if (columns.some((c) => c === null)) {
      out.exact = false;
      return;
    }
    tests = alternatives.map((c, i) => testSql(columns[i]!, c.op, c.value, params));
    out.tests.push(`(${tests.map((t) => t.sql).join(' OR ')})`);
  }
  if (tests.some((t) => !t.exact)) out.exact = false;
}

/** `Id=1|2|3` on a typed indexed property: one `= ANY(array)` the index answers; null for any other item. */
function inListSql(item: AnyOf, p: IndexedProperty, params: Params): string | null {
  const first = item.anyOf[0].locator.text;
  if (!item.anyOf.every((c) => c.op === '=' && c.locator.text === first)) return null;
  const literals = item.anyOf.map((c) => c.value);
  if (p.type === 'string' && literals.every((l) => l.kind === 'string' || (l.kind === 'raw' && l.date === undefined))) {
    const texts = literals.map((l) => (l.kind === 'string' ? l.value : (l as { text: string }).text));
    return `${textOf(p)} = ANY((${params.add(pgArray(texts))})::text[])`;
  }
  if (p.type === 'number' && literals.every((l) => l.kind === 'raw' && l.number !== undefined && Number.isFinite(l.number))) {
    const numbers = literals.map((l) => String((l as { number: number }).number));
    return `${valueOf(p)} = ANY((${params.add(pgArray(numbers))})::jsonb[])`;
  }
  return null;
}

/**
 * null/missing < booleans < numbers < strings < the rest, as compareValues; the caller
 * adds the tie-breaker (id: storage order). A typed indexed property sorts by its own
 * value, which is what its index holds (read straight from the row unless the query
 * already needs computed columns).
 */
function translateOrder(order: { locator: Locator; descending: boolean }, params: Params): string | null {
  const p = params.indexedProperty(order.locator);
  if (p?.type !== undefined) {
    const key = p.type === 'string' ? textOf(p) : valueOf(p);
    // Missing values (SQL NULL) sort first, as null/missing do.
    const dir = order.descending ? ' DESC NULLS LAST' : ' ASC NULLS FIRST';
    return (params.columns.length === 0 ? key : params.computed(key, `\0${p.name}`)) + dir;
  }
  const o = params.column(order.locator);
  if (o === null) return null;
  const dir = order.descending ? ' DESC' : '';
  const rank = `CASE WHEN ${o} IS NULL THEN 0 ELSE CASE jsonb_typeof(${o}) WHEN 'null' THEN 0 WHEN 'boolean' THEN 1 WHEN 'number' THEN 2 WHEN 'string' THEN 3 ELSE 4 END END`;
  const terms = [
    rank,
    `CASE WHEN jsonb_typeof(${o}) = 'boolean' THEN (${o})::boolean END`,
    // Two jsonb numbers compare as numerics.
    `CASE WHEN jsonb_typeof(${o}) = 'number' THEN ${o} END`,
    `CASE WHEN jsonb_typeof(${o}) = 'string' THEN (${o} #>> '{}') COLLATE "C" END`,
  ].map((t) => t + dir);
  return terms.join(', ');
}

/**
 * Several order keys, each breaking the ties of the ones before: one ORDER BY list, or
 * null when SQL cannot read one of them. A typed indexed key is read from the row only
 * while no key needs computed columns (then every key reads the computed ones).
 */
export function translateOrders(orders: readonly { locator: Locator; descending: boolean }[], params: Params): string | null {
  const before = params.columns.length;
  let parts = orders.map((o) => translateOrder(o, params));
  if (before === 0 && params.columns.length > 0 && orders.length > 1) parts = orders.map((o) => translateOrder(o, params));
  return parts.includes(null) ? null : parts.join(', ');
}

/**
 * A condition on an indexed property, read as `r.doc -> 'Name'`. With the property's
 * type known and a literal of that type, a plain comparison of what the index holds is
 * exact; otherwise compileTest's rules apply (testSql), and `=` first narrows to the few
 * stored values that can be equal, which the index finds.
 */
function indexedTest(p: IndexedProperty, op: Operator, literal: Literal, params: Params): Test {
  const v = valueOf(p);
  const missingOr = (test: string) => (op === '!=' ? `(${v} IS NULL OR ${test})` : test);
  if (literal.kind !== 'null') {
    if (p.type === 'number' && literal.kind === 'raw' && literal.number !== undefined && Number.isFinite(literal.number))
      return { sql: missingOr(`${v} ${SQL_OP[op]} (${params.add(String(literal.number))})::jsonb`), exact: true };
    if (p.type === 'boolean' && literal.kind === 'raw' && literal.boolean !== undefined)
      return { sql: missingOr(`${v} ${SQL_OP[op]} (${params.add(String(literal.boolean))})::jsonb`), exact: true };
    // An unquoted number is a mixed pair with strings (testSql), unless it is a bare key's (asText).
    if (
      p.type === 'string' &&
      (literal.kind === 'string' || (literal.date === undefined && (literal.number === undefined || literal.asText)))
    ) {
      const text = literal.kind === 'string' ? literal.value : literal.text;
      return { sql: missingOr(`${textOf(p)} ${SQL_OP[op]} ${params.add(text)}`), exact: true };
    }
  }
  const test = testSql(v, op, literal, params);
  const equal = op === '=' && p.type === undefined ? equalValues(literal) : null;
  if (equal === null) return test;
  return { sql: `(${v} IN (${equal.map((e) => `(${params.add(e)})::jsonb`).join(', ')}) AND ${test.sql})`, exact: test.exact };
}

/** The JSON texts of every value `= literal` holds for (compileTest), or null when not a few. */
export function equalValues(literal: Literal): string[] | null {
  if (literal.kind === 'string') return [JSON.stringify(literal.value)];
  if (literal.kind === 'null' || literal.date !== undefined) return null;
  const values = literal.number === undefined || literal.asText ? [JSON.stringify(literal.text)] : [];
  if (literal.number !== undefined && Number.isFinite(literal.number)) values.push(String(literal.number));
  if (literal.boolean !== undefined) values.push(String(literal.boolean));
  return values.length > 0 ? values : null;
}

// ---- values: Locator.get in SQL -------------------------------------------------------

interface Segment {
  key: string;
  /** Other likely spellings (`city` -> `City`, `CITY`), tried before a scan of the keys. */
  spellings: string[];
  /** The segment lower-cased, as a parameter; null when no other spelling can match. */
  lower: string | null;
  /** `"<lower>"`, for a quick look in the JSON text; null when the text may escape the key. */
  quoted: string | null;
  /** Whether a key may spell `k` as KELVIN SIGN (U+212A), which folds to `k`. */
  kelvin: boolean;
  isLength: boolean;
  /**
   * The array index the segment names (Number(segment), as Locator reads it). A
   * parameter only once a step uses it: PostgreSQL refuses a parameter the SQL never
   * mentions (the first segment, `/2024=x`, only reads object keys).
   */
  index: number | null;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Text PostgreSQL can hold as it is: no NUL, no unpaired surrogate (the client would replace it). */
export function storable(text: string): boolean {
  return !text.includes('\0') && !LONE_SURROGATE.test(text);
}

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function segmentOf(text: string, params: Params): Segment | null {
  const lower = text.toLowerCase();
  // PostgreSQL's lower() under COLLATE "C" folds ASCII only; JavaScript folds all of
  // Unicode. A segment that folds to ASCII matches the same keys in both, once the one
  // non-ASCII letter that folds to an ASCII one (KELVIN SIGN -> k) is mapped too.
  if (!storable(text) || !ASCII.test(lower)) return null;
  const index = Number(text);
  const folds = /[a-z]/.test(lower);
  const spellings = folds ? [...new Set([capitalized(text), capitalized(lower), lower, text.toUpperCase()])].filter((s) => s !== text) : [];
  return {
    key: params.add(text),
    spellings: spellings.map((s) => params.add(s)),
    lower: folds ? params.add(lower) : null,
    // JSON.stringify writes keys as they are but for '"', '\\' and control characters.
    // eslint-disable-next-line no-control-regex -- control characters are what this refuses
    quoted: folds && !/["\\\x00-\x1f]/.test(lower) ? params.add(`"${lower}"`) : null,
    kelvin: lower.includes('k'),
    isLength: lower === 'length',
    index: Number.isInteger(index) && index >= 0 && index <= 0x7fffffff ? index : null,
  };
}

/**
 * The exact key first; else a key equal ignoring case. Locator takes the first such key
 * in insertion order, which jsonb does not keep: an object holding two such keys (and
 * not the exact one) is ambiguous, and the core's own per-locator key cache answers it
 * differently from one entity to the next. Likely spellings are tried first (one lookup
 * each), then a scan of the keys, skipped when the entity's JSON text cannot hold any.
 */
function objectStep(x: string, seg: Segment): string {
  const exact = `${x} -> ${seg.key}`;
  if (seg.lower === null) return exact;
  const fold = (t: string) => `lower(${seg.kelvin ? `translate(${t}, chr(8490), 'k')` : t} COLLATE "C")`;
  const scan = `(SELECT f.value FROM jsonb_each(${x}) f WHERE ${fold('f.key')} = ${seg.lower} LIMIT 1)`;
  const guarded = seg.quoted === null ? scan : `CASE WHEN strpos(${fold('r.body')}, ${seg.quoted}) > 0 THEN ${scan} END`;
  return `coalesce(${[exact, ...seg.spellings.map((s) => `${x} -> ${s}`), guarded].join(', ')})`;
}

/** One Locator step from a jsonb value `x` (a column reference: it is read several times). */
function step(x: string, seg: Segment, params: Params): string {
  const branches = [`WHEN 'object' THEN ${objectStep(x, seg)}`];
  if (seg.isLength) {
    branches.push(`WHEN 'array' THEN to_jsonb(jsonb_array_length(${x}))`);
    // Code points, as the core's Locator counts them (grammar/locator.ts codePoints).
    branches.push(`WHEN 'string' THEN to_jsonb(length(${x} #>> '{}'))`);
  } else if (seg.index !== null) {
    branches.push(`WHEN 'array' THEN ${x} -> (${params.add(String(seg.index))})::int`);
  }
  return `CASE jsonb_typeof(${x}) ${branches.join(' ')} END`;
}

/**
 * Locator.get as a jsonb expression over `r.doc` (an entity, always an object), or null
 * when it cannot be reproduced exactly. A dotted locator first tries the exact keys all
 * the way down (`doc -> 'a' -> 'b'`); only when that finds nothing does it take the
 * general path, one fenced subquery per step so that no step is computed twice.
 */
export function valueSql(locator: Locator, params: Params): string | null {
  const mark = params.values.length;
  const segments: Segment[] = [];
  for (const text of locator.segments) {
    const seg = segmentOf(text, params);
    if (seg === null) return params.reset(mark);
    segments.push(seg);
  }
  let general = objectStep('r.doc', segments[0]);
  for (let i = 1; i < segments.length; i++) {
    general = `(SELECT ${step(`x${i}.v`, segments[i], params)} FROM (SELECT ${general} AS v OFFSET 0) x${i})`;
  }
  if (segments.length === 1) return general;
  const exactPath = `r.doc${segments.map((s) => ` -> ${s.key}`).join('')}`;
  return `coalesce(${exactPath}, ${general})`;
}

// ---- tests: compileTest in SQL --------------------------------------------------------

const SQL_OP: Record<Operator, string> = { '=': '=', '!=': '<>', '<': '<', '>': '>', '<=': '<=', '>=': '>=' };

interface Test {
  sql: string;
  /** False when the test keeps a superset (rows the service must check again). */
  exact: boolean;
}

/** Whether the literal's text can be a parameter. */
export function sendable(literal: Literal): boolean {
  return literal.kind === 'null' || storable(literal.kind === 'string' ? literal.value : literal.text);
}

/** `value op literal` with compileTest's rules. */
function testSql(c: string, op: Operator, literal: Literal, params: Params): Test {
  const mismatch = op === '!=' ? 'TRUE' : 'FALSE';
  const sqlOp = SQL_OP[op];
  if (literal.kind === 'null') {
    if (op === '=') return { sql: `(${c} IS NULL OR jsonb_typeof(${c}) = 'null')`, exact: true };
    if (op === '!=') return { sql: `(${c} IS NOT NULL AND jsonb_typeof(${c}) <> 'null')`, exact: true };
    return { sql: 'FALSE', exact: true };
  }
  const text = literal.kind === 'string' ? literal.value : literal.text;
  const str = `(${c} #>> '{}') COLLATE "C"`;
  const branches: string[] = [];
  let exact = true;
  if (literal.kind === 'string') {
    branches.push(`WHEN 'string' THEN ${str} ${sqlOp} ${params.add(text)}`);
  } else if (literal.number !== undefined) {
    branches.push(`WHEN 'number' THEN ${numberTest(c, op, literal.number, params)}`);
    // A string is a mixed pair (ELSE), except for a bare key's number, which compares the text.
    if (literal.asText) branches.push(`WHEN 'string' THEN ${str} ${sqlOp} ${params.add(text)}`);
  } else if (literal.date !== undefined) {
    const test = dateTest(str, sqlOp, literal.text, literal.date, (v) => params.add(v));
    branches.push(`WHEN 'string' THEN ${test.sql}`);
    exact = test.exact;
  } else {
    if (literal.boolean !== undefined)
      branches.push(`WHEN 'boolean' THEN (${c})::boolean ${sqlOp} ${params.add(String(literal.boolean))}::boolean`);
    branches.push(`WHEN 'string' THEN ${str} ${sqlOp} ${params.add(text)}`);
  }
  return { sql: `CASE jsonb_typeof(${c}) ${branches.join(' ')} ELSE ${mismatch} END`, exact };
}

function numberTest(c: string, op: Operator, n: number, params: Params): string {
  // Two jsonb numbers compare as numerics, without converting the stored one first.
  if (Number.isFinite(n)) return `${c} ${SQL_OP[op]} (${params.add(String(n))})::jsonb`;
  // `1e999` is Infinity: every stored number is below it (JSON numbers are finite).
  const below = n > 0;
  const holds = op === '!=' || ((op === '<' || op === '<=') && below) || ((op === '>' || op === '>=') && !below);
  return holds ? 'TRUE' : 'FALSE';
}
