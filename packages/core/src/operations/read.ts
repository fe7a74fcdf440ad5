// GET, HEAD and REPORT: the entities a query selects, read from the storage and made the
// answer's output (the rest of the query applied here), and the stored entities a write targets.
import { isPromise, type Eventually } from '../util/eventually.js';
import type { Operation, OperationContext } from './context.js';
import type { Entity, Predicate } from '../query/conditions.js';
import { evaluate, pagingCanBePushedDown, type CompiledQuery, type EvaluateOptions } from '../query/evaluate.js';
import type { Locator } from '../grammar/locator.js';
import { DEFAULT_SEARCH_BUDGET, scanSearch } from '../query/scan.js';
import { parseSearchSettings, type SearchPredicate } from '../query/search.js';
import type { Resource } from '../model/resources.js';
import type { Result } from './results.js';
import type { RowRule } from '../model/rules.js';
import { SELECT_ALL, type SelectQuery, type SelectResult } from '../storage/storage.js';
import { entityVersion } from '../storage/version.js';
import { withOutputNames } from './output-names.js';

/**
 * The entities a GET returns (output form, projected): at once when the storage answers
 * at once and there is no search to scan, else a promise.
 */
function selectOutput(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null = null,
  budget = DEFAULT_SEARCH_BUDGET,
  provenance?: Provenance,
): Eventually<Entity[]> {
  return selectFrom(resource, q, rows, budget, provenance, false) as Eventually<Entity[]>;
}

/** selectOutput, or with `stream`, the entities one at a time when the storage streams them (SelectQuery.stream). */
function selectFrom(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  budget: number,
  provenance: Provenance | undefined,
  stream: boolean,
): Eventually<Entity[] | Streamed> {
  if (q.meta.add === null && q.meta.select === null) return selectNamed(resource, q, rows, budget, provenance, stream);
  const named = withOutputNames(resource, q, rows);
  return isPromise(named)
    ? Promise.resolve(named).then((n) => selectNamed(resource, n, rows, budget, provenance, stream))
    : selectNamed(resource, named, rows, budget, provenance, stream);
}

/** selectFrom once the output names of `add` and a dotted `select` are known. */
function selectNamed(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  budget: number,
  provenance: Provenance | undefined,
  stream: boolean,
): Eventually<Entity[] | Streamed> {
  const toOutput = resource.definition.toOutput;
  const filter = rows?.filter ?? null;
  if (toOutput) return selectThroughOutput(resource, q, toOutput, filter, budget);
  if (provenance !== undefined && q.project !== null) q = counting(q, q.project, provenance);
  const { meta } = q;
  // A text search goes with the conditions to a storage that applies it (SQL).
  const searching = resource.storage.searches === true && meta.search !== null && meta.searchRegex === null;
  // A predicate rule runs here, not in storage: storage then must not page.
  // Several order keys go only to a storage that applies them all (ordersByKeys).
  const keys = meta.order?.length ?? 0;
  const push =
    filter === null &&
    (keys <= 1 || resource.storage.ordersByKeys === true) &&
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
  const streams = stream && push && (q.search === null || searching);
  if (streams) request.stream = true;
  // No closures on the way when the storage answers at once: each would cost every GET an allocation.
  const selected = resource.storage.select(request);
  return isPromise(selected)
    ? outputLater(selected, q, filter, searching, push, budget, streams)
    : outputOf(selected, q, filter, searching, push, budget, streams);
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

/** What the storage selected, made the GET's output: the rest of the query applied here. */
function outputOf(
  result: SelectResult,
  q: CompiledQuery,
  filter: Predicate | null,
  searching: boolean,
  push: boolean,
  budget: number,
  streams: boolean,
): Eventually<Entity[] | Streamed> {
  const query = searching && result.conditionsApplied ? { ...q, search: null } : q;
  const options = { conditionsApplied: result.conditionsApplied, pagingApplied: push && result.pagingApplied };
  if (streams && !Array.isArray(result.entities) && options.conditionsApplied && options.pagingApplied)
    return streamed(result.entities as AsyncIterable<Entity>, query.project);
  if (Array.isArray(result.entities)) return evaluateScanning(visible(result.entities as Entity[], filter), query, options, budget);
  return evaluateCollected(result.entities, query, filter, options, budget);
}

async function outputLater(
  selected: PromiseLike<SelectResult>,
  q: CompiledQuery,
  filter: Predicate | null,
  searching: boolean,
  push: boolean,
  budget: number,
  streams: boolean,
): Promise<Entity[] | Streamed> {
  return outputOf(await selected, q, filter, searching, push, budget, streams);
}

async function evaluateCollected(
  entities: Iterable<Entity> | AsyncIterable<Entity>,
  q: CompiledQuery,
  filter: Predicate | null,
  options: EvaluateOptions,
  budget: number,
): Promise<Entity[]> {
  return evaluateScanning(visible(await collect(entities), filter), q, options, budget);
}

/** Entities a storage streams, projected one at a time (a GET's 'stream' result). */
class Streamed {
  constructor(readonly entities: AsyncIterable<Entity>) {}
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

/** Conditions see what clients see, so a hidden property (a secret) cannot be probed. */
async function selectThroughOutput(
  resource: Resource,
  q: CompiledQuery,
  toOutput: (e: Entity) => Entity,
  filter: Predicate | null,
  budget: number,
): Promise<Entity[]> {
  const all = await collect((await resource.storage.select(SELECT_ALL)).entities);
  return evaluateScanning(visible(all.map(toOutput), filter), q, {}, budget);
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
 * evaluate, with the search (if any) scanned first in slices, so other requests keep being
 * answered. Without a search it answers at once, not through a promise: every promise an
 * async function returns costs a GET a few turns of the microtask queue.
 */
function evaluateScanning(entities: Entity[], q: CompiledQuery, options: EvaluateOptions, budget: number): Entity[] | Promise<Entity[]> {
  if (q.search === null) return evaluate(entities, q, options);
  return searchThenEvaluate(entities, q, q.search, options, budget);
}

async function searchThenEvaluate(
  entities: Entity[],
  q: CompiledQuery,
  search: SearchPredicate,
  options: EvaluateOptions,
  budget: number,
): Promise<Entity[]> {
  const m = q.meta;
  const streaming = m.order === null && !m.distinct && m.offset >= 0 && m.limit >= 0;
  const predicate = options.conditionsApplied ? null : q.predicate;
  const matched = await scanSearch(entities, { predicate, search, budget, enough: streaming ? m.offset + m.limit : -1 });
  return evaluate(matched, { ...q, search: null }, { ...options, conditionsApplied: true });
}

/** The stored entities a write targets: the query without projection or distinct. */
export async function selectTargets(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  budget = DEFAULT_SEARCH_BUDGET,
): Promise<Entity[]> {
  const meta = { ...q.meta, add: null, rename: null, select: null, distinct: false };
  const target: CompiledQuery = { ...q, meta, project: null, sourceOrder: meta.order?.map((k) => k.locator) ?? null };
  const toOutput = resource.definition.toOutput;
  if (toOutput) {
    const stored = await collect((await resource.storage.select(SELECT_ALL)).entities);
    const storedOf = new Map(stored.map((e) => [toOutput(e), e]));
    return (await evaluateScanning(visible([...storedOf.keys()], rows?.filter ?? null), target, {}, budget)).map((e) => storedOf.get(e)!);
  }
  const result = await resource.storage.select({ conditions: q.conditions, predicate: q.predicate, order: null, offset: 0, limit: -1 });
  return evaluateScanning(
    visible(await collect(result.entities), rows?.filter ?? null),
    target,
    { conditionsApplied: result.conditionsApplied },
    budget,
  );
}

/** The entities a predicate row rule lets the caller see (ANDed with the conditions, so order does not matter). */
function visible(entities: Entity[], filter: Predicate | null): Entity[] {
  return filter === null ? entities : entities.filter(filter);
}

export async function collect(entities: Iterable<Entity> | AsyncIterable<Entity>): Promise<Entity[]> {
  if (Array.isArray(entities)) return entities as Entity[];
  const out: Entity[] = [];
  for await (const e of entities as AsyncIterable<Entity>) out.push(e);
  return out;
}

/** GET and HEAD: answered at once when nothing waits (no async hook, a storage that answers at once, no count=true). */
export const get = (op: OperationContext): Eventually<Result> => {
  const result = op.resource.hooks.beforeRead ? readAfterHook(op) : read(op);
  return op.query.meta.count ? withTotal(op, result) : result;
};

/** count=true: the page, then how many entities the GET selects before offset and limit (docs/uri.md#count). */
async function withTotal(op: OperationContext, page: Eventually<Result>): Promise<Result> {
  const result = await page;
  if (result.kind !== 'entities' && result.kind !== 'stream') return result;
  return { ...result, total: await totalOf(op) };
}

/**
 * The count the storage makes of the conditions (SQL: one count(*), no row read) when
 * nothing but the conditions decides what is selected; otherwise the entities selected
 * without offset and limit, counted here. Row rules are in the conditions or the filter,
 * so the total never counts an entity the caller cannot read.
 */
async function totalOf(op: OperationContext): Promise<number> {
  const { resource, query, rows } = op;
  const m = query.meta;
  if (query.search === null && !m.distinct && !resource.definition.toOutput && !rows?.filter && resource.storage.count)
    return resource.storage.count({ conditions: query.conditions, predicate: query.predicate });
  const unpaged: CompiledQuery = { ...query, meta: { ...m, offset: 0, limit: -1 } };
  return (await selectOutput(resource, unpaged, rows, op.searchBudget ?? DEFAULT_SEARCH_BUDGET)).length;
}

async function readAfterHook(op: OperationContext): Promise<Result> {
  await op.resource.hooks.beforeRead!(op.caller);
  return read(op);
}

function read(op: OperationContext): Eventually<Result> {
  const provenance: Provenance = { projected: 0 };
  // An afterRead hook takes the whole array.
  const stream = !op.resource.hooks.afterRead && op.stream === true;
  const selected = selectFrom(op.resource, op.query, op.rows, op.searchBudget ?? DEFAULT_SEARCH_BUDGET, provenance, stream);
  return isPromise(selected) ? readLater(op, selected, provenance) : readResult(op, selected, provenance);
}

async function readLater(op: OperationContext, selected: PromiseLike<Entity[] | Streamed>, provenance: Provenance): Promise<Result> {
  return readResult(op, await selected, provenance);
}

function readResult(op: OperationContext, selected: Entity[] | Streamed, provenance: Provenance): Eventually<Result> {
  if (selected instanceof Streamed) return { kind: 'stream', entities: selected.entities };
  const version = selected.length === 1 ? versionOfOutput(op.resource, op.query, selected[0], provenance) : undefined;
  return op.resource.hooks.afterRead ? afterReadHook(op, selected, version) : entitiesResult(selected, version);
}

async function afterReadHook(op: OperationContext, selected: Entity[], version: string | undefined): Promise<Result> {
  const after = await op.resource.hooks.afterRead!(selected, op.caller);
  return entitiesResult(after ?? selected, version);
}

function entitiesResult(entities: Entity[], version: string | undefined): Result {
  return version !== undefined && entities.length === 1 ? { kind: 'entities', entities, version } : { kind: 'entities', entities };
}

/** Which stored entity a projected output came from: the last one projected, and how many were. */
interface Provenance {
  projected: number;
  stored?: Entity;
}

/**
 * The version of the one stored entity a GET answered with (its ETag): the output itself
 * when unprojected, else the one entity projected; undefined when that cannot be told
 * (distinct, a toOutput hook, or an order on an output property that projected several).
 */
function versionOfOutput(resource: Resource, q: CompiledQuery, output: Entity, provenance: Provenance): string | undefined {
  if (q.meta.distinct || resource.definition.toOutput) return undefined;
  if (q.project === null) return entityVersion(resource.storage, output);
  return provenance.projected === 1 ? entityVersion(resource.storage, provenance.stored!) : undefined;
}

export const report: Operation = async ({ resource, query, rows, caller, searchBudget }) => {
  if (resource.hooks.beforeRead) await resource.hooks.beforeRead(caller);
  const m = query.meta;
  const plain = query.search === null && !m.distinct && m.limit < 0 && m.offset === 0 && !resource.definition.toOutput && !rows?.filter;
  if (plain && resource.storage.count)
    return { kind: 'count', count: await resource.storage.count({ conditions: query.conditions, predicate: query.predicate }) };
  return { kind: 'count', count: (await selectOutput(resource, query, rows, searchBudget)).length };
};
