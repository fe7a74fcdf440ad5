// The read plan: what of a GET's compiled query the storage does (conditions, search,
// order, page, distinct, the properties to read) and what the service does after it.
// One object carries the decision from planning to the output, instead of parameter lists.
// It lives beside the operations, not in query/, because it speaks the storage contract,
// which is a layer above the query engine (docs/architecture.md).
import type { Eventually } from '../util/eventually.js';
import type { Entity, Predicate } from '../query/conditions.js';
import { evaluate, pagingCanBePushedDown, type CompiledQuery, type EvaluateOptions } from '../query/evaluate.js';
import type { Locator } from '../grammar/locator.js';
import { DEFAULT_SEARCH_BUDGET, scanSearch } from '../query/scan.js';
import { checkDerived, DEFAULT_DERIVED_LIMITS, evaluateLarge, isLarge, type DerivedLimits } from '../query/large.js';
import { parseSearchSettings, type SearchPredicate } from '../query/search.js';
import type { Resource } from '../model/resources.js';
import type { RowRule } from '../model/rules.js';
import type { SelectQuery, SelectResult } from '../storage/storage.js';

/** Which stored entity a projected output came from: the last one projected, and how many were. */
export interface Provenance {
  projected: number;
  stored?: Entity;
}

/** How a GET reads: the caller's row rule, the search budget, provenance, and whether it may stream. */
export interface ReadSettings {
  readonly rows: RowRule | null;
  readonly budget: Budgets;
  readonly provenance?: Provenance;
  readonly stream: boolean;
}

/** What the storage is asked, and what the service then does with the answer. */
export interface ReadPlan {
  /** The query the service applies after the storage (projecting through provenance). */
  readonly query: CompiledQuery;
  readonly filter: Predicate | null;
  readonly budget: Budgets;
  /** The text search goes with the conditions to a storage that applies it (SQL). */
  readonly searching: boolean;
  /** Order and page go to the storage. */
  readonly push: boolean;
  /** The storage streams the entities and nothing after it needs them all. */
  readonly streams: boolean;
  /** The storage's request. */
  readonly request: SelectQuery;
}

/** Entities a storage streams, projected one at a time (a GET's 'stream' result). */
export class Streamed {
  constructor(readonly entities: AsyncIterable<Entity>) {}
}

/** The plan for reading `q` (its output names known) from the resource's storage. */
export function planRead(resource: Resource, q: CompiledQuery, settings: ReadSettings): ReadPlan {
  const { provenance } = settings;
  const filter = settings.rows?.filter ?? null;
  if (provenance !== undefined && q.project !== null) q = counting(q, q.project, provenance);
  const { meta } = q;
  const storage = resource.storage;
  const searching = storage.searches === true && meta.search !== null && meta.searchRegex === null;
  // A predicate rule runs here, not in storage: storage then must not page.
  // Several order keys go only to a storage that applies them all (ordersByKeys).
  const keys = meta.order?.length ?? 0;
  const push =
    filter === null &&
    (keys <= 1 || storage.ordersByKeys === true) &&
    pagingCanBePushedDown(searching ? { ...q, search: null } : q) &&
    meta.offset >= 0;
  const request: SelectQuery = {
    conditions: q.conditions,
    predicate: q.predicate,
    order: push && meta.order ? { locator: q.sourceOrder![0], descending: meta.order[0].descending } : null,
    offset: push ? meta.offset : 0,
    limit: push ? meta.limit : -1,
  };
  if (push && keys > 1) request.thenBy = meta.order!.slice(1).map((k, i) => ({ locator: q.sourceOrder![i + 1], descending: k.descending }));
  if (searching) request.search = parseSearchSettings(meta.search!);
  if (filter === null && meta.distinct && meta.select && !meta.add && !meta.rename && (q.search === null || searching))
    request.distinct = meta.select;
  const reads = readLocators(resource, q, filter === null && (q.search === null || searching));
  if (reads !== null) request.select = reads;
  // Nothing after the storage needs them all: it applies conditions and page, and the service projects each.
  const streams = settings.stream && push && (q.search === null || searching);
  if (streams) request.stream = true;
  if (q.generate === false) request.generate = false;
  return { query: q, filter, budget: settings.budget, searching, push, streams, request };
}

/** The query projecting as `q` does, telling `provenance` which stored entity it projected last and how many. */
function counting(q: CompiledQuery, project: (e: Entity) => Entity, provenance: Provenance): CompiledQuery {
  return {
    ...q,
    project: (e) => {
      provenance.projected++;
      provenance.stored = e;
      return project(e);
    },
  };
}

/**
 * The locators the service reads from each stored entity, when they are all it reads:
 * `select` without add or rename, plus the order's (when the storage may leave it), with
 * no filter or search of the service's own. Only for storages with stamps, since a
 * partial entity's content would make another ETag.
 */
function readLocators(resource: Resource, q: CompiledQuery, nothingElse: boolean): Locator[] | null {
  const { select, add, rename, order } = q.meta;
  if (!nothingElse || select === null || add !== null || rename !== null || !resource.storage.stamp) return null;
  return order !== null && q.sourceOrder !== null ? [...select, ...q.sourceOrder] : select;
}

/**
 * What the storage selected, made the GET's output: the rest of the plan's query applied
 * here. At once when the storage answered with an array and there is no search to scan.
 */
export function outputOf(result: SelectResult, plan: ReadPlan): Eventually<Entity[] | Streamed> {
  const q = plan.searching && result.conditionsApplied ? { ...plan.query, search: null } : plan.query;
  const options = applied(result.conditionsApplied === true, plan.push && result.pagingApplied === true);
  if (plan.streams && !Array.isArray(result.entities) && options.conditionsApplied && options.pagingApplied)
    return streamed(result.entities as AsyncIterable<Entity>, q.project);
  if (Array.isArray(result.entities)) return evaluateScanning(visible(result.entities as Entity[], plan.filter), q, options, plan.budget);
  return evaluateCollected(result.entities, q, plan.filter, options, plan.budget);
}

/**
 * What the storage applied, as evaluate's options: one shared object for each of the four
 * cases instead of a new one a GET (each object on a small GET's path costs it time in a
 * busy server, docs/performance.md). Never changed: a step that needs others copies.
 */
const APPLIED: readonly EvaluateOptions[] = [
  Object.freeze({ conditionsApplied: false, pagingApplied: false }),
  Object.freeze({ conditionsApplied: true, pagingApplied: false }),
  Object.freeze({ conditionsApplied: false, pagingApplied: true }),
  Object.freeze({ conditionsApplied: true, pagingApplied: true }),
];

function applied(conditions: boolean, paging: boolean): EvaluateOptions {
  return APPLIED[(conditions ? 1 : 0) + (paging ? 2 : 0)];
}

/** outputOf for a storage that answers through a promise. */
export async function outputLater(selected: PromiseLike<SelectResult>, plan: ReadPlan): Promise<Entity[] | Streamed> {
  return outputOf(await selected, plan);
}

async function evaluateCollected(
  entities: Iterable<Entity> | AsyncIterable<Entity>,
  q: CompiledQuery,
  filter: Predicate | null,
  options: EvaluateOptions,
  budget: Budgets,
): Promise<Entity[]> {
  return evaluateScanning(visible(await collect(entities), filter), q, options, budget);
}

/**
 * The streamed entities, projected as they come; an empty stream is an empty array (so
 * the answer is a 204 as ever). The first is read before answering, so a storage that
 * fails at once is an error response, not a cut body.
 */
async function streamed(entities: AsyncIterable<Entity>, project: ((e: Entity) => Entity) | null): Promise<Entity[] | Streamed> {
  const iterator = entities[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return [];
  const head = first.value;
  async function* rest(): AsyncGenerator<Entity> {
    try {
      yield project === null ? head : project(head);
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        yield project === null ? next.value : project(next.value);
    } finally {
      // A client that left stops the reading.
      await iterator.return?.();
    }
  }
  return new Streamed(rest());
}

/**
 * evaluate, with the search (if any) scanned first in slices, so other requests keep being
 * answered. Without a search it answers at once, not through a promise: every promise an
 * async function returns costs a GET a few turns of the microtask queue.
 */
export function evaluateScanning(
  entities: Entity[],
  q: CompiledQuery,
  options: EvaluateOptions,
  budget: Budgets,
): Entity[] | Promise<Entity[]> {
  if (q.search === null) return evaluateSliced(entities, q, options, budget);
  return searchThenEvaluate(entities, q, q.search, options, budget);
}

/** evaluate; over a large set with derived work, in slices that give other requests turns (query/large.ts). */
function evaluateSliced(entities: Entity[], q: CompiledQuery, options: EvaluateOptions, budget: Budgets): Entity[] | Promise<Entity[]> {
  if (isLarge(entities.length, q, options)) return evaluateLarge(entities, q, options, budget.derived);
  const out = evaluate(entities, q, options);
  if (q.project !== null) checkDerived(out.length, q.meta, budget.derived);
  return out;
}

/** What one request may scan and derive (the service options searchBudget, maxLocators, maxDerivedValues). */
export interface Budgets {
  search: number;
  derived: DerivedLimits;
}

export const DEFAULT_BUDGETS: Budgets = { search: DEFAULT_SEARCH_BUDGET, derived: DEFAULT_DERIVED_LIMITS };

/** One Budgets per service's limits (they are its options): a GET does not allocate its own. */
const budgetsOfLimits = new WeakMap<DerivedLimits, Budgets>();

/** The budgets of an operation's request; a search budget alone keeps the default derived limits. Never mutated. */
export function budgetsOf(op: { searchBudget?: number; derived?: DerivedLimits }): Budgets {
  const search = op.searchBudget ?? DEFAULT_SEARCH_BUDGET;
  const derived = op.derived ?? DEFAULT_DERIVED_LIMITS;
  let budgets = budgetsOfLimits.get(derived);
  if (budgets === undefined || budgets.search !== search) budgetsOfLimits.set(derived, (budgets = { search, derived }));
  return budgets;
}

async function searchThenEvaluate(
  entities: Entity[],
  q: CompiledQuery,
  search: SearchPredicate,
  options: EvaluateOptions,
  budget: Budgets,
): Promise<Entity[]> {
  const m = q.meta;
  const streaming = m.order === null && !m.distinct && m.offset >= 0 && m.limit >= 0;
  const predicate = options.conditionsApplied ? null : q.predicate;
  const matched = await scanSearch(entities, { predicate, search, budget: budget.search, enough: streaming ? m.offset + m.limit : -1 });
  return evaluateSliced(matched, { ...q, search: null }, { ...options, conditionsApplied: true }, budget);
}

/** The entities a predicate row rule lets the caller see (ANDed with the conditions, so order does not matter). */
export function visible(entities: Entity[], filter: Predicate | null): Entity[] {
  return filter === null ? entities : entities.filter(filter);
}

export async function collect(entities: Iterable<Entity> | AsyncIterable<Entity>): Promise<Entity[]> {
  if (Array.isArray(entities)) return entities as Entity[];
  const out: Entity[] = [];
  for await (const e of entities as AsyncIterable<Entity>) out.push(e);
  return out;
}
