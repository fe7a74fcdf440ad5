import type { Condition, ConditionItem, Operator } from '../grammar/parse.js';
import { isoTime, type Literal } from '../grammar/literal.js';
import { compareStrings } from './order.js';

export type Entity = Record<string, unknown>;
export type Predicate = (entity: Entity) => boolean;

/**
 * Compiles conditions into one predicate, once per parsed query. Comparison rules:
 * numbers numerically, strings by code point, dates by time, `=null` matches null or
 * missing; a comparison of mismatched types never throws (`=` false, `!=` true,
 * ordering false), and an unquoted number against a string is such a pair.
 */
export function compileConditions(conditions: readonly ConditionItem[]): Predicate | null {
  const tests = conditions.map(compileItem);
  switch (tests.length) {
    case 0:
      return null;
    case 1:
      return tests[0];
    case 2: {
      const [a, b] = tests;
      return (e) => a(e) && b(e);
    }
    case 3: {
      const [a, b, c] = tests;
      return (e) => a(e) && b(e) && c(e);
    }
    default:
      return (e) => {
        for (const t of tests) if (!t(e)) return false;
        return true;
      };
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- comparisons take values of every JSON type (hot path, no narrowing)
type Cmp = (a: any, b: any) => boolean;
const CMP: Record<Operator, Cmp> = {
  '=': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => (typeof a === 'string' ? compareStrings(a, b as string) < 0 : a < b),
  '>': (a, b) => (typeof a === 'string' ? compareStrings(a, b as string) > 0 : a > b),
  '<=': (a, b) => (typeof a === 'string' ? compareStrings(a, b as string) <= 0 : a <= b),
  '>=': (a, b) => (typeof a === 'string' ? compareStrings(a, b as string) >= 0 : a >= b),
};

/** An item: its one condition, or true when any of its alternatives is (an IN list of strings is a set lookup). */
function compileItem(item: ConditionItem): Predicate {
  if (!('anyOf' in item)) return compileCondition(item);
  const alternatives = item.anyOf;
  const first = alternatives[0].locator;
  if (alternatives.every((c) => c.op === '=' && c.value.kind === 'string' && c.locator.text === first.text)) {
    const values = new Set(alternatives.map((c) => (c.value as { value: string }).value));
    return (e) => {
      const v = first.get(e);
      return typeof v === 'string' && values.has(v);
    };
  }
  // Compiled when first run: a storage that applies the conditions itself (SQL's `= ANY`)
  // never runs the predicate, and an IN list is new in most requests.
  let tests: Predicate[] | undefined;
  return (e) => {
    tests ??= alternatives.map(compileCondition);
    for (const t of tests) if (t(e)) return true;
    return false;
  };
}

function compileCondition(condition: Condition): Predicate {
  const { locator, op, value } = condition;
  return compileTest(op, value, op === '!=', locator);
}

/** Where a test reads its value: a Locator on an entity, or the value itself. */
interface Source<T> {
  get(x: T): unknown;
}
const ITSELF: Source<unknown> = { get: (v) => v };

/** A test of one value against a literal; exported for event selectors and PUT matching. */
export function valueTest(op: Operator, literal: Literal): (value: unknown) => boolean {
  return compileTest(op, literal, op === '!=', ITSELF);
}

/**
 * The hot comparisons (a number against a number, a string for equality, null) get a
 * closure per operator, so that each comparison is inlined rather than called through a
 * table shared by every query; other value types go through the general test.
 */
function compileTest<T>(op: Operator, literal: Literal, mismatch: boolean, src: Source<T>): (x: T) => boolean {
  const cmp = CMP[op];
  if (literal.kind === 'null') {
    if (op === '=') return (x) => src.get(x) == null;
    if (op === '!=') return (x) => src.get(x) != null;
    return () => false;
  }
  if (literal.kind === 'string') {
    const s = literal.value;
    if (op === '=') return (x) => src.get(x) === s;
    if (op === '!=') return (x) => src.get(x) !== s;
    return (x) => {
      const v = src.get(x);
      return typeof v === 'string' ? cmp(v, s) : mismatch;
    };
  }
  const { text, number, boolean, date, asText } = literal;
  if (number !== undefined) {
    // Values that are not numbers are a mixed pair; a bare key's strings compare with the literal's text.
    const other = asText ? (v: unknown) => (typeof v === 'string' ? cmp(v, text) : mismatch) : () => mismatch;
    switch (op) {
      case '=':
        return (x) => {
          const v = src.get(x);
          return typeof v === 'number' ? v === number : other(v);
        };
      case '!=':
        return (x) => {
          const v = src.get(x);
          return typeof v === 'number' ? v !== number : other(v);
        };
      case '<':
        return (x) => {
          const v = src.get(x);
          return typeof v === 'number' ? v < number : other(v);
        };
      case '>':
        return (x) => {
          const v = src.get(x);
          return typeof v === 'number' ? v > number : other(v);
        };
      case '<=':
        return (x) => {
          const v = src.get(x);
          return typeof v === 'number' ? v <= number : other(v);
        };
      case '>=':
        return (x) => {
          const v = src.get(x);
          return typeof v === 'number' ? v >= number : other(v);
        };
    }
  }
  const get = (x: T) => src.get(x);
  if (date !== undefined) {
    return (x) => {
      const v = get(x);
      if (typeof v === 'string') {
        const t = isoTime(v);
        return t === undefined ? cmp(v, text) : cmp(t, date);
      }
      if (v instanceof Date) return cmp(v.getTime(), date);
      return mismatch;
    };
  }
  if (boolean !== undefined) {
    return (x) => {
      const v = get(x);
      if (typeof v === 'boolean') return cmp(v, boolean);
      return typeof v === 'string' ? cmp(v, text) : mismatch;
    };
  }
  return (x) => {
    const v = get(x);
    return typeof v === 'string' ? cmp(v, text) : mismatch;
  };
}
