import { ServiceError } from '../errors.js';
import { nextTurn } from '../util/turn.js';
import type { Entity } from './conditions.js';
import { evaluate, type CompiledQuery, type EvaluateOptions } from './evaluate.js';
import type { MetaConditions, OrderKey } from './meta-conditions.js';
import { comparator, slice, type Directions, type Keyed } from './order.js';
import type { Projection } from './projection.js';
import { distinctOutputs } from './distinct.js';

/**
 * Large sets evaluated in slices (docs/limits.md#large-work): projecting, distinct and
 * sorting many entities is done a slice at a time, other requests getting a turn of the
 * event loop between slices, so a cheap GET beside a request over the whole resource is
 * answered at once. Small sets are evaluated in one go, in the request's own turn.
 */

/** Sets of up to this many entities are evaluated in one go. */
const LARGE_SET = 2000;
/** Units of work (an entity projected, a value derived, a comparison, an item merged) done between two turns. */
const SLICE_WORK = 4000;
/** A page this small is kept while scanning (evaluate's TopK), never a sort of everything. */
const TOP_K_MAX = 1000;
/** Sorted runs made by one native sort, then merged in slices. */
const RUN = 512;

/** What one request may derive: the service options maxLocators and maxDerivedValues (docs/limits.md). */
export interface DerivedLimits {
  /** Locators `add` and `select` list together. */
  maxLocators: number;
  /** Values `add` and `select` make in all: entities projected times locators. */
  maxDerivedValues: number;
}

export const DEFAULT_DERIVED_LIMITS: DerivedLimits = { maxLocators: 100, maxDerivedValues: 10_000_000 };

/** The locators `add` and `select` list together. */
function locatorCount(meta: MetaConditions): number {
  return (meta.add?.length ?? 0) + (meta.select?.length ?? 0);
}

/** 400 naming the limit when `add` and `select` list more locators than maxLocators. */
export function checkLocators(meta: MetaConditions, limits: DerivedLimits): void {
  const n = locatorCount(meta);
  if (n > limits.maxLocators) {
    throw new ServiceError(
      'InvalidMetaConditionValueType',
      `add and select list ${n} locators, more than the limit of ${limits.maxLocators} per request (the service option maxLocators, docs/limits.md)`,
    );
  }
}

/** 400 naming the limit when projecting `outputs` entities would derive more than maxDerivedValues values. */
export function checkDerived(outputs: number, meta: MetaConditions, limits: DerivedLimits): void {
  const values = outputs * locatorCount(meta);
  if (values > limits.maxDerivedValues) {
    throw new ServiceError(
      'InvalidMetaConditionValueType',
      `add and select would derive ${values} values (${outputs} entities times ${locatorCount(meta)} locators), more than the limit of ${limits.maxDerivedValues} per request (the service option maxDerivedValues, docs/limits.md); narrow the request with conditions or a limit`,
    );
  }
}

/** Whether sorting `n` entities for this page is a sort of (nearly) everything. */
function sortsMany(n: number, offset: number, limit: number): boolean {
  return n > LARGE_SET && !(offset >= 0 && limit >= 0 && offset + limit <= TOP_K_MAX);
}

/** Whether evaluating the query over `n` entities is large work, done by evaluateLarge. */
export function isLarge(n: number, q: CompiledQuery, options: EvaluateOptions): boolean {
  if (n <= LARGE_SET) return false;
  const m = q.meta;
  if (q.project !== null || m.distinct) return true;
  return !options.pagingApplied && m.order !== null && sortsMany(n, m.offset, m.limit);
}

/**
 * evaluate (the same answer, docs/uri.md#evaluation-order), in slices: conditions in one
 * pass, then distinct, order and projection a slice at a time. Refuses (400) a projection
 * past `limits.maxDerivedValues`.
 */
export async function evaluateLarge(
  entities: Entity[],
  q: CompiledQuery,
  options: EvaluateOptions,
  limits: DerivedLimits,
): Promise<Entity[]> {
  const m = q.meta;
  const paged = options.pagingApplied === true;
  const order = paged ? null : m.order;
  const offset = paged ? 0 : m.offset;
  const limit = paged ? -1 : m.limit;
  const project = q.project;
  // No order, no distinct: the page of stored entities (the scan stops once it is full), then projected.
  if (order === null && !m.distinct) {
    const page = evaluate(entities, { ...q, project: null }, options);
    return projectAll(page, project, m, limits);
  }
  const all = evaluate(entities, { ...q, project: null, meta: { ...m, order: null, distinct: false, offset: 0, limit: -1 } }, options);
  if (order !== null && q.sourceOrder !== null && !m.distinct) {
    const source = q.sourceOrder;
    const sorted = await sortInSlices(
      all,
      orderKey(source, (l, e) => l.get(e)),
      directions(order),
    );
    return projectAll(slice(sorted, offset, limit), project, m, limits);
  }
  let outputs = m.distinct ? await distinctInSlices(all, project, m, limits) : await projectAll(all, project, m, limits);
  if (order !== null) {
    const locators = order.map((k) => k.locator);
    outputs = await sortInSlices(
      outputs,
      orderKey(locators, (l, e) => l.getOutput(e)),
      directions(order),
    );
  }
  const page = slice(outputs, offset, limit);
  // The stored array itself is never handed out: callers may change what they get.
  return page === entities ? page.slice() : page;
}

interface Reads {
  get(e: Entity): unknown;
  getOutput(e: unknown): unknown;
}

function orderKey<L extends Reads>(locators: readonly L[], read: (l: L, e: Entity) => unknown): (e: Entity) => unknown {
  if (locators.length === 1) {
    const l = locators[0];
    return (e) => read(l, e);
  }
  return (e) => locators.map((l) => read(l, e));
}

function directions(order: readonly OrderKey[]): Directions {
  return order.length === 1 ? order[0].descending : order.map((k) => k.descending);
}

/** Each entity projected, a slice at a time (the work of a slice scales with the locators). */
async function projectAll(entities: Entity[], project: Projection | null, meta: MetaConditions, limits: DerivedLimits): Promise<Entity[]> {
  if (project === null) return entities;
  checkDerived(entities.length, meta, limits);
  const per = Math.max(1, Math.floor(SLICE_WORK / (4 + locatorCount(meta))));
  const out = new Array<Entity>(entities.length);
  for (let i = 0; i < entities.length; ) {
    i = projectStretch(entities, project, out, i, Math.min(entities.length, i + per));
    if (i < entities.length) await nextTurn();
  }
  return out;
}

function projectStretch(entities: Entity[], project: Projection, out: Entity[], from: number, to: number): number {
  for (let i = from; i < to; i++) out[i] = project(entities[i]);
  return to;
}

/**
 * distinct: the first of each group of equal outputs, a slice at a time. Each slice's firsts
 * come from distinctOutputs (which projects only them when it can); a first already seen in
 * an earlier slice (the same JSON text, which is what distinct compares) is dropped.
 */
async function distinctInSlices(
  matches: Entity[],
  project: Projection | null,
  meta: MetaConditions,
  limits: DerivedLimits,
): Promise<Entity[]> {
  if (project !== null) checkDerived(matches.length, meta, limits);
  const seen = new Set<string>();
  const out: Entity[] = [];
  const per = Math.max(1, Math.floor(SLICE_WORK / (4 + locatorCount(meta))));
  for (let i = 0; i < matches.length; ) {
    const to = Math.min(matches.length, i + per);
    distinctStretch(distinctOutputs(matches.slice(i, to), meta, project), seen, out);
    i = to;
    if (i < matches.length) await nextTurn();
  }
  return out;
}

function distinctStretch(firsts: Entity[], seen: Set<string>, out: Entity[]): void {
  for (const e of firsts) {
    const key = JSON.stringify(e);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(e);
    }
  }
}

/**
 * A stable sort (as sortEntities: key, then position) made of native sorts of RUN items
 * and merges of them, a turn between slices of about SLICE_WORK comparisons.
 */
export async function sortInSlices<T>(items: readonly T[], key: (item: T) => unknown, descending: Directions): Promise<T[]> {
  const n = items.length;
  const cmp = comparator(descending);
  let src = new Array<Keyed<T>>(n);
  for (let start = 0; start < n; start += RUN) {
    sortRun(items, key, src, cmp, start, Math.min(n, start + RUN));
    if (start + RUN < n) await nextTurn();
  }
  let dst = new Array<Keyed<T>>(n);
  for (let width = RUN; width < n; width *= 2) {
    const merge: Merge<T> = { src, dst, cmp, lo: 0, mid: 0, hi: 0, i: 0, j: 0, k: 0 };
    for (let lo = 0; lo < n; lo += 2 * width) {
      merge.lo = merge.i = merge.k = lo;
      merge.mid = merge.j = Math.min(n, lo + width);
      merge.hi = Math.min(n, lo + 2 * width);
      while (!mergeStretch(merge, SLICE_WORK)) await nextTurn();
    }
    [src, dst] = [dst, src];
    await nextTurn();
  }
  const out = new Array<T>(n);
  for (let i = 0; i < n; i++) out[i] = src[i].item;
  return out;
}

function sortRun<T>(
  items: readonly T[],
  key: (item: T) => unknown,
  into: Keyed<T>[],
  cmp: (a: Keyed<T>, b: Keyed<T>) => number,
  from: number,
  to: number,
): void {
  const run: Keyed<T>[] = [];
  for (let i = from; i < to; i++) run.push({ key: key(items[i]), index: i, item: items[i] });
  run.sort(cmp);
  for (let i = 0; i < run.length; i++) into[from + i] = run[i];
}

interface Merge<T> {
  src: Keyed<T>[];
  dst: Keyed<T>[];
  cmp: (a: Keyed<T>, b: Keyed<T>) => number;
  lo: number;
  mid: number;
  hi: number;
  i: number;
  j: number;
  k: number;
}

/** Merges src[lo, mid) and src[mid, hi) into dst for at most `work` items; true when done. */
function mergeStretch<T>(m: Merge<T>, work: number): boolean {
  const { src, dst, cmp, mid, hi } = m;
  let { i, j, k } = m;
  const stop = Math.min(hi, k + work);
  while (k < stop) {
    if (i < mid && (j >= hi || cmp(src[i], src[j]) <= 0)) dst[k++] = src[i++];
    else dst[k++] = src[j++];
  }
  m.i = i;
  m.j = j;
  m.k = k;
  return k >= hi;
}
