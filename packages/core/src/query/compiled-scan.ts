import { alternativesOf, type Condition, type ConditionItem, type Operator } from '../grammar/parse.js';
import { LRUCache } from 'lru-cache';
import { valueTest, type Entity, type Predicate } from './conditions.js';
import type { Locator } from '../grammar/locator.js';
import { compareKeys, compareStrings, insertSorted } from './order.js';

/**
 * Compiled scans: the loop over stored entities generated once per query shape with
 * `new Function`, conditions inline, each property read once with a plain property
 * access, and the top-k check inline. A closure plan reads properties through
 * `Locator.get`, one method shared by every locator of every query, so its property
 * reads go megamorphic once a process has run a few queries; generated code gives each
 * shape its own monomorphic reads (docs/performance.md). Literals are parameters, so
 * queries that differ only in their values share one function and its optimised code.
 *
 * Semantics are those of the closure plan (conditions.ts, order.ts): a property read
 * that finds nothing under the exact spelling falls back to `Locator.get` (case
 * variants, dotted paths through arrays, `.Length`), and every comparison other than
 * number/number, string equality and null goes through the closure test.
 */

/** A scan over an array: `stream` returns matches [skip, skip + limit); `top` the best k in order. */
export type Scan = (list: readonly Entity[], a: number, b: number) => Entity[];

type Generated = (
  list: readonly Entity[],
  a: number,
  b: number,
  P: unknown[],
  L: readonly Locator[],
  T: ((v: unknown) => boolean)[],
  S: Predicate | null,
) => Entity[];

/** Calls of one query before its scan is generated, so one-off queries do not pay compilation. */
const TIER_UP = 2;
const shapes = new LRUCache<string, Generated>({ max: 256 });
let enabled = true;
let available: boolean | undefined;
let generatedCount = 0;

/**
 * Turns code generation on or off for the process (it is on where the runtime allows
 * it). Off, every query runs the closure plan; results are the same.
 */
export function setCodeGeneration(on: boolean): void {
  enabled = on;
}

/** Whether scans are generated: enabled and allowed by the runtime (CSP, edge runtimes refuse `new Function`). */
export function codeGenerationActive(): boolean {
  if (available === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-implied-eval -- probing whether the runtime allows generated code
      available = (new Function('return true') as () => unknown)() === true;
    } catch {
      available = false;
    }
  }
  return enabled && available;
}

/** How many scan functions were generated so far (for tests and benchmarks). */
export function generatedScans(): number {
  return generatedCount;
}

interface Entry {
  order: readonly Locator[] | null;
  descending: string;
  search: Predicate | null;
  calls: number;
  scan: Scan | null;
}

const entries = new WeakMap<readonly ConditionItem[], Entry[]>();

/**
 * The generated scan for these conditions, search and order keys, or null while the query
 * is young or where code generation is off (the caller runs the closure plan). `descending`
 * holds a letter per order key: `a` ascending, `d` descending ('' without an order).
 */
export function scanFor(
  conditions: readonly ConditionItem[],
  search: Predicate | null,
  order: readonly Locator[] | null,
  descending: string,
): Scan | null {
  if (!enabled) return null;
  let list = entries.get(conditions);
  if (list === undefined) {
    list = [];
    entries.set(conditions, list);
  }
  let entry: Entry | undefined;
  for (const x of list) if (sameOrder(x.order, order) && x.descending === descending && x.search === search) entry = x;
  if (entry === undefined) {
    if (list.length >= 8) list.shift();
    entry = { order, descending, search, calls: 0, scan: null };
    list.push(entry);
  }
  if (entry.scan !== null) return entry.scan;
  entry.calls++;
  const key = shapeKey(conditions, search, order, descending);
  let generated = shapes.get(key);
  if (generated === undefined) {
    if (entry.calls <= TIER_UP || !codeGenerationActive()) return null;
    try {
      generated = generate(conditions, search !== null, order, descending);
    } catch {
      available = false;
      return null;
    }
    generatedCount++;
    shapes.set(key, generated);
  }
  const fn = generated;
  const P: unknown[] = [];
  const T: ((v: unknown) => boolean)[] = [];
  const flat = conditions.flatMap(alternativesOf);
  for (const c of flat) {
    const lit = c.value;
    if (lit.kind === 'string') P.push(lit.value);
    else if (lit.kind === 'raw' && lit.number !== undefined) P.push(lit.number, lit.text);
    else {
      P.push(null);
      T.push(valueTest(c.op, lit));
    }
  }
  const L = flat.map((c) => c.locator);
  if (order !== null) L.push(...order);
  entry.scan = (items, a, b) => fn(items, a, b, P, L, T, search);
  return entry.scan;
}

/** The same locators in the same places (callers such as MemoryStorage build a new list per query). */
function sameOrder(a: readonly Locator[] | null, b: readonly Locator[] | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function literalClass(c: Condition): string {
  const lit = c.value;
  if (lit.kind !== 'raw') return lit.kind;
  return lit.number !== undefined ? (lit.asText ? 'number-text' : 'number') : 'test';
}

function shapeKey(
  conditions: readonly ConditionItem[],
  search: Predicate | null,
  order: readonly Locator[] | null,
  descending: string,
): string {
  let key = search === null ? '' : 's';
  for (const item of conditions) {
    // An item's alternatives follow its first one after \u0003 (`a|b` is not `a&b`).
    alternativesOf(item).forEach((c, i) => {
      key += `${i === 0 ? '\u0000' : '\u0003'}${c.locator.text}\u0001${c.op}\u0001${literalClass(c)}`;
    });
  }
  if (order !== null) order.forEach((l, j) => (key += `\u0002${l.text}\u0001${descending[j]}`));
  return key;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** Reads a locator's value of entity `e` into `v`: plain property reads, `Locator.get` when they find nothing. */
function readInto(v: string, locator: Locator, index: number, e = 'e'): string {
  // `.length` of a string counts code points (Locator), not what JavaScript's `.length` gives.
  const inline = locator.segments.every(
    (s, i) => IDENTIFIER.test(s) && !(s in Object.prototype) && (i === 0 || s.toLowerCase() !== 'length'),
  );
  if (!inline) return `const ${v} = L[${index}].get(${e});`;
  let code = `let ${v} = ${e}.${locator.segments[0]};`;
  for (const s of locator.segments.slice(1)) code += ` ${v} = ${v} != null ? ${v}.${s} : undefined;`;
  // Inherited methods (`"x".at`) and case variants are the Locator's business.
  return `${code} if (${v} === undefined || typeof ${v} === 'function') ${v} = L[${index}].get(${e});`;
}

const ORDERING: Partial<Record<Operator, string>> = { '<': '<', '>': '>', '<=': '<=', '>=': '>=' };

/** The test of value `v` for condition `i`, as an expression (conditions.ts compileTest, inlined). */
function testOf(c: Condition, v: string, p: number, t: number): string {
  const lit = c.value;
  const op = c.op;
  const mismatch = op === '!=' ? 'true' : 'false';
  if (lit.kind === 'null') return op === '=' ? `${v} == null` : op === '!=' ? `${v} != null` : 'false';
  if (lit.kind === 'string') {
    if (op === '=') return `${v} === P[${p}]`;
    if (op === '!=') return `${v} !== P[${p}]`;
    return `(typeof ${v} === 'string' ? cmpS(${v}, P[${p}]) ${ORDERING[op]} 0 : false)`;
  }
  if (lit.number !== undefined) {
    const js = op === '=' ? '===' : op === '!=' ? '!==' : ORDERING[op];
    // A string is a mixed pair, except for a bare key's number (asText), which compares the text.
    if (!lit.asText) return `(typeof ${v} === 'number' ? ${v} ${js} P[${p}] : ${mismatch})`;
    const text = op === '=' ? `${v} === P[${p + 1}]` : op === '!=' ? `${v} !== P[${p + 1}]` : `cmpS(${v}, P[${p + 1}]) ${js} 0`;
    return `(typeof ${v} === 'number' ? ${v} ${js} P[${p}] : typeof ${v} === 'string' ? ${text} : ${mismatch})`;
  }
  return `T[${t}](${v})`;
}

function generate(
  conditions: readonly ConditionItem[],
  hasSearch: boolean,
  order: readonly Locator[] | null,
  descending: string,
): Generated {
  const read = new Map<string, string>();
  const body: string[] = [];
  const value = (locator: Locator, index: number): string => {
    let v = read.get(locator.text);
    if (v === undefined) {
      v = `v${read.size}`;
      read.set(locator.text, v);
      body.push(readInto(v, locator, index));
    }
    return v;
  };
  let p = 0;
  let t = 0;
  // P, T and L hold the alternatives of every item in a row (scanFor's `flat`).
  let i = 0;
  for (const item of conditions) {
    const tests: string[] = [];
    for (const c of alternativesOf(item)) {
      const v = value(c.locator, i++);
      tests.push(`(${testOf(c, v, p, t)})`);
      const lit = c.value;
      if (lit.kind === 'raw' && lit.number !== undefined) p += 2;
      else {
        if (lit.kind !== 'string') t++;
        p++;
      }
    }
    body.push(`if (!(${tests.join(' || ')})) continue;`);
  }
  if (hasSearch) body.push('if (!S(e)) continue;');
  let head: string;
  let tail: string;
  let end = '';
  if (order === null) {
    head = 'const out = []; let skip = a; const limit = b;';
    tail = 'if (skip > 0) { skip--; continue; } out.push(e); if (out.length === limit) break;';
  } else if (order.length > 1) {
    // The first key is read with the conditions; the others only for an item that gets past it.
    [head, tail, end] = severalKeys(
      value(order[0], i),
      order.slice(1).map((l, j) => (v: string) => readInto(v, l, i + 1 + j, 'x')),
      descending,
    );
  } else {
    const key = value(order[0], i);
    // Worse than (or tied with) the last kept item: dropped without a call (stable: later loses ties).
    const worse = descending === 'd' ? '<=' : '>=';
    const sign = descending === 'd' ? -1 : 1;
    head = 'const out = []; const keys = []; const k = a;';
    tail = `const n = keys.length;
      if (n === k) {
        const last = keys[n - 1];
        if (typeof ${key} === 'number' && typeof last === 'number' && ${key} === ${key} && last === last ? ${key} ${worse} last : ${sign} * cmpK(${key}, last) >= 0) continue;
      }
      insert(keys, out, ${key}, e, k, ${sign});`;
  }
  const source = `'use strict';
    return function scan(list, a, b, P, L, T, S) {
      ${head}
      for (let i = 0; i < list.length; i++) {
        const e = list[i];
        ${body.join('\n        ')}
        ${tail}
      }
      ${end}
      return out;
    };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the generated scan is this module's purpose (source built above, no caller text)
  const make = new Function('cmpS', 'cmpK', 'insert', source) as (...helpers: unknown[]) => Generated;
  return make(compareStrings, compareKeys, insertSorted);
}

/** compareKeys(a, b) as an expression, numbers compared in place (most order keys are numbers), two strings by compareStrings. */
function compareExpr(a: string, b: string, descending: boolean): string {
  const c = `(typeof ${a} === 'number' && typeof ${b} === 'number' && ${a} === ${a} && ${b} === ${b} ? (${a} < ${b} ? -1 : ${a} > ${b} ? 1 : 0) : typeof ${a} === 'string' && typeof ${b} === 'string' ? cmpS(${a}, ${b}) : cmpK(${a}, ${b}))`;
  return descending ? `-${c}` : c;
}

/** Candidates that tie on the first key with the last kept item, held before they are compared in full. */
const PENDING = 32;

/**
 * The best `k` by several order keys while scanning (the closure plan's selectRange): the
 * page with one array of values per key beside it. The loop itself only compares an item's
 * first key with the last kept item's (`t`, numbers in place): most items lose there, with
 * no call, no allocation and no read of the other keys. An item that ties is held in a
 * pending list, which is settled when it holds PENDING items, when an item that beats the
 * last kept one on the first key comes, and at the end: each pending item, in scan order,
 * has its other keys read, is compared in full with the last kept item and, if it belongs
 * in the page, is inserted after its equals (stable). The page only gets better while
 * items wait, so the answer is the one of taking each item as it comes, and the loop over
 * every item stays as small as the one-key scan's (docs/performance.md).
 */
function severalKeys(first: string, later: ((v: string) => string)[], descending: string): [head: string, tail: string, end: string] {
  const keys = ['p', ...later.map((_, j) => `w${j}`)];
  // Key by key against the kept values at `at(j)`, into `c`.
  const compare = (at: (j: number) => string): string => {
    let code = '';
    for (let j = keys.length - 1; j >= 0; j--) {
      const c = `c = ${compareExpr(keys[j], at(j), descending[j] === 'd')};`;
      code = j === keys.length - 1 ? c : `${c} if (c === 0) { ${code} }`;
    }
    return code;
  };
  const down = descending[0] === 'd';
  // The first character of the second key, `h` for a pending item's, `f` for the last kept
  // item's: an item that ties on the first key and loses on that character is passed over
  // without a call (compareStrings orders two units by their difference when either is below
  // U+D800). A value that is no string or is empty stands as `never` for `h` and `none` for `f`:
  // then nothing is passed over.
  const up = descending[1] !== 'd';
  const never = up ? '-1' : '0x10ffff';
  const none = up ? '0x10ffff' : '-1';
  const loses = up ? 'h > f && f < 0xd800' : 'h < f && h < 0xd800';
  const head = `const out = []; ${keys.map((_, j) => `const K${j} = [];`).join(' ')} const k = a;
      if (k <= 0) return out;
      const PE = []; const PV = []; ${later.map((_, j) => `const PW${j} = [];`).join(' ')} const PH = [];
      let np = 0; let full = false; let t; let f = ${none};`;
  // Settles the pending items, in order: `x` and `p` (the entity and its first key) are theirs.
  // Their other keys are read first, all of them, then the first characters: loads that do
  // not wait on each other, where reading them one item at a time waited on each.
  const settle = `for (let q = 0; q < np; q++) {
        const x = PE[q];
        ${later.map((read, j) => `${read(`w${j}`)} PW${j}[q] = w${j};`).join('\n        ')}
      }
      for (let q = 0; q < np; q++) { const w = PW0[q]; PH[q] = typeof w === 'string' && w.length !== 0 ? w.charCodeAt(0) : ${never}; }
      for (let q = 0; q < np; q++) {
        const x = PE[q];
        const p = PV[q];
        ${later.map((_, j) => `const w${j} = PW${j}[q];`).join(' ')}
        const n = out.length;
        if (full && p === t) { const h = PH[q]; if (${loses}) continue; }
        if (full) { let c; ${compare((j) => `K${j}[n - 1]`)} if (c >= 0) continue; }
        let lo = 0;
        let hi = n;
        while (lo < hi) { const mid = (lo + hi) >>> 1; let c; ${compare((j) => `K${j}[mid]`)} if (c < 0) hi = mid; else lo = mid + 1; }
        if (!full) { out.push(x); ${keys.map((key, j) => `K${j}.push(${key});`).join(' ')} }
        for (let j = full ? n - 1 : n; j > lo; j--) { out[j] = out[j - 1]; ${keys.map((_, j) => `K${j}[j] = K${j}[j - 1];`).join(' ')} }
        out[lo] = x; ${keys.map((key, j) => `K${j}[lo] = ${key};`).join(' ')}
        if (out.length === k) {
          full = true;
          t = K0[k - 1];
          const l = K1[k - 1];
          f = typeof l === 'string' && l.length !== 0 ? l.charCodeAt(0) : ${none};
        }
      }
      np = 0;`;
  const tail = `if (full) {
        let c;
        if (typeof ${first} === 'number' && typeof t === 'number' && ${first} === ${first} && t === t) {
          if (${first} ${down ? '<' : '>'} t) continue;
          c = ${first} === t ? 0 : -1;
        } else {
          c = ${compareExpr(first, 't', down)};
          if (c > 0) continue;
        }
        PE[np] = e; PV[np] = ${first}; np++;
        if (c === 0 && np < ${PENDING}) continue;
      } else { PE[np] = e; PV[np] = ${first}; np++; }
      ${settle}`;
  return [head, tail, `if (np > 0) { ${settle} }`];
}
