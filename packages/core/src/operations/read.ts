// GET, HEAD and REPORT: the entities a query selects, read from the storage and made the
// answer's output (the rest of the query applied here), and the stored entities a write targets.
import { isPromise, type Eventually } from '../util/eventually.js';
import type { Operation, OperationContext } from './context.js';
import type { Entity, Predicate } from '../query/conditions.js';
import type { CompiledQuery } from '../query/evaluate.js';
import { DEFAULT_SEARCH_BUDGET } from '../query/scan.js';
import type { Resource } from '../model/resources.js';
import type { Result } from './results.js';
import type { RowRule } from '../model/rules.js';
import { SELECT_ALL, type SelectQuery } from '../storage/storage.js';
import { entityVersion } from '../storage/version.js';
import { withOutputNames } from './output-names.js';
import {
  collect,
  evaluateScanning,
  outputLater,
  outputOf,
  planRead,
  Streamed,
  budgetsOf,
  DEFAULT_BUDGETS,
  type Budgets,
  visible,
  type Provenance,
  type ReadSettings,
} from './plan.js';
import { selectEmbedded } from './embed.js';
import type { RelatedReads } from './related.js';
import { storageCount, storageSelect } from '../storage/clock.js';

/**
 * The entities a GET returns (output form, projected): at once when the storage answers
 * at once and there is no search to scan, else a promise.
 */
export function selectOutput(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null = null,
  budget: Budgets = DEFAULT_BUDGETS,
): Eventually<Entity[]> {
  return selectFrom(resource, q, { rows, budget, stream: false }) as Eventually<Entity[]>;
}

/** selectOutput, or with `stream`, the entities one at a time when the storage streams them (SelectQuery.stream). */
function selectFrom(resource: Resource, q: CompiledQuery, settings: ReadSettings): Eventually<Entity[] | Streamed> {
  if (q.meta.add === null && q.meta.select === null) return selectNamed(resource, q, settings);
  const named = withOutputNames(resource, q, settings.rows);
  return isPromise(named) ? Promise.resolve(named).then((n) => selectNamed(resource, n, settings)) : selectNamed(resource, named, settings);
}

/** selectFrom once the output names of `add` and a dotted `select` are known. */
function selectNamed(resource: Resource, q: CompiledQuery, settings: ReadSettings): Eventually<Entity[] | Streamed> {
  const toOutput = resource.definition.toOutput;
  if (toOutput) return selectThroughOutput(resource, q, toOutput, settings.rows?.filter ?? null, settings.budget);
  const plan = planRead(resource, q, settings);
  // No closures on the way when the storage answers at once: each would cost every GET an allocation.
  const selected = storageSelect(resource.storage, plan.request);
  return isPromise(selected) ? outputLater(selected, plan) : outputOf(selected, plan);
}

/** Conditions see what clients see, so a hidden property (a secret) cannot be probed. */
async function selectThroughOutput(
  resource: Resource,
  q: CompiledQuery,
  toOutput: (e: Entity) => Entity,
  filter: Predicate | null,
  budget: Budgets,
): Promise<Entity[]> {
  const all = await collect((await storageSelect(resource.storage, SELECT_ALL)).entities);
  return evaluateScanning(visible(all.map(toOutput), filter), q, {}, budget);
}

/** The stored entities a write targets: the query without projection or distinct. */
export async function selectTargets(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  searchBudget = DEFAULT_SEARCH_BUDGET,
): Promise<Entity[]> {
  const budget: Budgets = { ...DEFAULT_BUDGETS, search: searchBudget };
  const meta = { ...q.meta, add: null, rename: null, select: null, distinct: false };
  const target: CompiledQuery = { ...q, meta, project: null, sourceOrder: meta.order?.map((k) => k.locator) ?? null };
  const toOutput = resource.definition.toOutput;
  if (toOutput) {
    const stored = await collect((await storageSelect(resource.storage, SELECT_ALL)).entities);
    const storedOf = new Map(stored.map((e) => [toOutput(e), e]));
    return (await evaluateScanning(visible([...storedOf.keys()], rows?.filter ?? null), target, {}, budget)).map((e) => storedOf.get(e)!);
  }
  const request: SelectQuery = { conditions: q.conditions, predicate: q.predicate, order: null, offset: 0, limit: -1 };
  if (q.generate === false) request.generate = false;
  const result = await storageSelect(resource.storage, request);
  return evaluateScanning(
    visible(await collect(result.entities), rows?.filter ?? null),
    target,
    { conditionsApplied: result.conditionsApplied },
    budget,
  );
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
    return storageCount(resource.storage, { conditions: query.conditions, predicate: query.predicate });
  if (m.embed !== null && m.distinct) return (await selectEmbedded(resource, query, rows, relatedReads(op), false)).length;
  const unpaged: CompiledQuery = { ...query, meta: { ...m, offset: 0, limit: -1 } };
  return (await selectOutput(resource, unpaged, rows, budgetsOf(op))).length;
}

async function readAfterHook(op: OperationContext): Promise<Result> {
  await op.resource.hooks.beforeRead!(op.caller);
  return read(op);
}

function read(op: OperationContext): Eventually<Result> {
  if (op.query.meta.embed !== null) return readEmbedded(op);
  // Which stored entity a projection came from (its ETag): only a projecting query needs one.
  const provenance: Provenance | undefined = op.query.project === null ? undefined : { projected: 0 };
  // An afterRead hook takes the whole array.
  const stream = !op.resource.hooks.afterRead && op.stream === true;
  const settings = { rows: op.rows, budget: budgetsOf(op), provenance, stream };
  const selected = selectFrom(op.resource, op.query, settings);
  return isPromise(selected) ? readLater(op, selected, provenance) : readResult(op, selected, provenance);
}

/** A GET with `embed` (docs/relations.md): no ETag, since the answer holds other resources' entities. */
async function readEmbedded(op: OperationContext): Promise<Result> {
  const selected = await selectEmbedded(op.resource, op.query, op.rows, relatedReads(op));
  return op.resource.hooks.afterRead ? afterReadHook(op, selected, undefined) : entitiesResult(selected, undefined);
}

/** How the operation reads related resources: with the caller's rights. */
function relatedReads(op: OperationContext): RelatedReads {
  return { caller: op.caller, authorize: op.authorize, select: selectOutput, budget: budgetsOf(op) };
}

async function readLater(
  op: OperationContext,
  selected: PromiseLike<Entity[] | Streamed>,
  provenance: Provenance | undefined,
): Promise<Result> {
  return readResult(op, await selected, provenance);
}

function readResult(op: OperationContext, selected: Entity[] | Streamed, provenance: Provenance | undefined): Eventually<Result> {
  if (selected instanceof Streamed) return { kind: 'stream', entities: selected.entities };
  const { resource } = op;
  const stored = selected.length === 1 ? storedOf(resource, op.query, selected[0], provenance) : undefined;
  if (stored === undefined)
    return resource.hooks.afterRead ? afterReadHook(op, selected, undefined) : { kind: 'entities', entities: selected };
  const stamp = resource.storage.stamp?.(stored);
  const version = entityVersion(resource.storage, stored, stamp);
  if (resource.hooks.afterRead) return afterReadHook(op, selected, version);
  // The entity as stored, under a stamp that lasts as long as its state: its text may be kept (entity-texts.ts).
  return stored === selected[0] && stamp?.text !== undefined
    ? { kind: 'entities', entities: selected, version, state: stamp }
    : { kind: 'entities', entities: selected, version };
}

async function afterReadHook(op: OperationContext, selected: Entity[], version: string | undefined): Promise<Result> {
  const after = await op.resource.hooks.afterRead!(selected, op.caller);
  return entitiesResult(after ?? selected, version);
}

function entitiesResult(entities: Entity[], version: string | undefined): Result {
  return version !== undefined && entities.length === 1 ? { kind: 'entities', entities, version } : { kind: 'entities', entities };
}

/**
 * The stored entity whose version a one-entity output has (its ETag): the output itself
 * when unprojected, else the one entity projected; undefined when that cannot be told
 * (distinct, a toOutput hook, or an order on an output property that projected several).
 */
function storedOf(resource: Resource, q: CompiledQuery, output: Entity, provenance: Provenance | undefined): Entity | undefined {
  if (q.meta.distinct || resource.definition.toOutput) return undefined;
  if (q.project === null) return output;
  return provenance?.projected === 1 ? provenance.stored : undefined;
}

export const report: Operation = async (op) => {
  const { resource, query, rows, caller } = op;
  if (resource.hooks.beforeRead) await resource.hooks.beforeRead(caller);
  const m = query.meta;
  const plain = query.search === null && !m.distinct && m.limit < 0 && m.offset === 0 && !resource.definition.toOutput && !rows?.filter;
  if (plain && resource.storage.count)
    return { kind: 'count', count: await storageCount(resource.storage, { conditions: query.conditions, predicate: query.predicate }) };
  if (m.embed !== null && m.distinct)
    return { kind: 'count', count: (await selectEmbedded(resource, query, rows, relatedReads(op), false)).length };
  return { kind: 'count', count: (await selectOutput(resource, query, rows, budgetsOf(op))).length };
};
