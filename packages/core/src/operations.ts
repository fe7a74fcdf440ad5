import type { Caller } from './caller.js';
import { ServiceError } from './errors.js';
import { isPromise, type Eventually } from './eventually.js';
import { checkUnique, fillKeys, storedMatches } from './key.js';
import type { Entity, Predicate } from './query/conditions.js';
import { evaluate, pagingCanBePushedDown, type CompiledQuery, type EvaluateOptions } from './query/evaluate.js';
import { literalValue } from './query/literal.js';
import { findKey, type Locator } from './query/locator.js';
import { DEFAULT_SEARCH_BUDGET, scanSearch } from './query/scan.js';
import { parseSearchSettings, type SearchPredicate } from './query/search.js';
import type { Resource } from './resources.js';
import type { Result } from './results.js';
import { checkRow, type RowRule } from './rules.js';
import { keyValues, SELECT_ALL, targetOf, type SelectQuery, type SelectResult } from './storage/storage.js';
import { checkNoneMatch, checkVersions, entityVersion } from './storage/version.js';

/** What operations need from the service. */
export interface OperationContext {
  resource: Resource;
  query: CompiledQuery;
  /** Reads the request's entities (body or Source); 400 NoDataSource when there are none. */
  input(): Promise<Entity[]>;
  /** Raises a change event of the resource, if it raises events. */
  changed(kind: 'Inserted' | 'Updated' | 'Deleted', entities: Entity[]): Promise<void>;
  /** Checks the caller's rights on another resource (403 Forbidden). */
  authorize(resource: string, method: string): void;
  /**
   * The response writes a GET's entities one at a time (JSON or JSON Lines, no Destination,
   * no If-Match): past what a storage holds in memory, it may then stream them.
   */
  stream?: boolean;
  /** Characters search and search_regex may scan for this request. */
  searchBudget?: number;
  /** Who is calling, for hooks. */
  caller: Caller;
  /** The rows the caller may see and change; its conditions are already in `query`. */
  rows: RowRule | null;
  /**
   * If-Match of PUT, PATCH and DELETE: the entity versions (`entityVersion`, an ETag's
   * value) the write may change, or `*`; any other is 412 PreconditionFailed.
   */
  ifMatch?: readonly string[];
  /** If-None-Match of PUT, PATCH and DELETE: versions (or `*`: any entity) the write must not change. */
  ifNoneMatch?: readonly string[];
}

export type Operation = (op: OperationContext) => Promise<Result>;

/**
 * The entities a GET returns (output form, projected): at once when the storage answers
 * at once and there is no search to scan, else a promise.
 */
export function selectOutput(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null = null,
  budget = DEFAULT_SEARCH_BUDGET,
  origin?: Origin,
): Eventually<Entity[]> {
  return selectFrom(resource, q, rows, budget, origin, false) as Eventually<Entity[]>;
}

/** selectOutput, or with `stream`, the entities one at a time when the storage streams them (SelectQuery.stream). */
function selectFrom(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  budget: number,
  origin: Origin | undefined,
  stream: boolean,
): Eventually<Entity[] | Streamed> {
  const toOutput = resource.definition.toOutput;
  const filter = rows?.filter ?? null;
  if (toOutput) return selectThroughOutput(resource, q, toOutput, filter, budget);
  if (origin !== undefined && q.project !== null) q = counting(q, q.project, origin);
  const { meta } = q;
  // A text search goes with the conditions to a storage that applies it (SQL).
  const searching = resource.storage.searches === true && meta.search !== null && meta.searchRegex === null;
  // A predicate rule runs here, not in storage: storage then must not page.
  const push = filter === null && pagingCanBePushedDown(searching ? { ...q, search: null } : q) && meta.offset >= 0;
  const request: SelectQuery = {
    conditions: q.conditions,
    predicate: q.predicate,
    order: push && meta.order ? { locator: q.sourceOrder!, descending: meta.order.descending } : null,
    offset: push ? meta.offset : 0,
    limit: push ? meta.limit : -1,
  };
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

/** The query projecting as `q` does, telling `origin` which stored entity it projected last and how many. */
function counting(q: CompiledQuery, project: (e: Entity) => Entity, origin: Origin): CompiledQuery {
  return {
    ...q,
    project: (e) => {
      origin.projected++;
      origin.stored = e;
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
  if (Array.isArray(result.entities)) return evaluateScanning(visible(result.entities, filter), query, options, budget);
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
  async function* rest(): AsyncGenerator<Entity> {
    try {
      yield project === null ? first.value : project(first.value);
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
  return order !== null && q.sourceOrder !== null ? [...select, q.sourceOrder] : select;
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
async function selectTargets(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  budget = DEFAULT_SEARCH_BUDGET,
): Promise<Entity[]> {
  const meta = { ...q.meta, add: null, rename: null, select: null, distinct: false };
  const target: CompiledQuery = { ...q, meta, project: null, sourceOrder: meta.order?.locator ?? null };
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

async function collect(entities: Iterable<Entity> | AsyncIterable<Entity>): Promise<Entity[]> {
  if (Array.isArray(entities)) return entities;
  const out: Entity[] = [];
  for await (const e of entities as AsyncIterable<Entity>) out.push(e);
  return out;
}

/** GET and HEAD: answered at once when nothing waits (no async hook, a storage that answers at once). */
const get = (op: OperationContext): Eventually<Result> => (op.resource.hooks.beforeRead ? readAfterHook(op) : read(op));

async function readAfterHook(op: OperationContext): Promise<Result> {
  await op.resource.hooks.beforeRead!(op.caller);
  return read(op);
}

function read(op: OperationContext): Eventually<Result> {
  const origin: Origin = { projected: 0 };
  // An afterRead hook takes the whole array.
  const stream = !op.resource.hooks.afterRead && op.stream === true;
  const selected = selectFrom(op.resource, op.query, op.rows, op.searchBudget ?? DEFAULT_SEARCH_BUDGET, origin, stream);
  return isPromise(selected) ? readLater(op, selected, origin) : readResult(op, selected, origin);
}

async function readLater(op: OperationContext, selected: PromiseLike<Entity[] | Streamed>, origin: Origin): Promise<Result> {
  return readResult(op, await selected, origin);
}

function readResult(op: OperationContext, selected: Entity[] | Streamed, origin: Origin): Eventually<Result> {
  if (selected instanceof Streamed) return { kind: 'stream', entities: selected.entities };
  const version = selected.length === 1 ? versionOfOutput(op.resource, op.query, selected[0], origin) : undefined;
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
interface Origin {
  projected: number;
  stored?: Entity;
}

/**
 * The version of the one stored entity a GET answered with (its ETag): the output itself
 * when unprojected, else the one entity projected; undefined when that cannot be told
 * (distinct, a toOutput hook, or an order on an output property that projected several).
 */
function versionOfOutput(resource: Resource, q: CompiledQuery, output: Entity, origin: Origin): string | undefined {
  if (q.meta.distinct || resource.definition.toOutput) return undefined;
  if (q.project === null) return entityVersion(resource.storage, output);
  return origin.projected === 1 ? entityVersion(resource.storage, origin.stored!) : undefined;
}

const report: Operation = async ({ resource, query, rows, caller, searchBudget }) => {
  if (resource.hooks.beforeRead) await resource.hooks.beforeRead(caller);
  const m = query.meta;
  const plain = query.search === null && !m.distinct && m.limit < 0 && m.offset === 0 && !resource.definition.toOutput && !rows?.filter;
  if (plain && resource.storage.count)
    return { kind: 'count', count: await resource.storage.count({ conditions: query.conditions, predicate: query.predicate }) };
  return { kind: 'count', count: (await selectOutput(resource, query, rows, searchBudget)).length };
};

async function prepare(op: OperationContext, entity: Entity, existing?: Entity): Promise<Entity> {
  const { resource, caller } = op;
  const { beforeInsert, beforeUpdate } = resource.hooks;
  if (existing === undefined && beforeInsert) entity = (await beforeInsert(entity, caller)) ?? entity;
  if (existing !== undefined && beforeUpdate) entity = (await beforeUpdate(entity, existing, caller)) ?? entity;
  const before = resource.definition.beforeWrite;
  // A Standard Schema validator's output (defaults filled, unknown keys dropped) is what is stored.
  const value = await resource.validate(
    before ? await before(entity, { operation: existing ? 'update' : 'insert', existing, authorize: op.authorize, caller }) : entity,
  );
  // A caller cannot write a row into (or move one out to) rows it may not see.
  checkRow(op.rows, resource.output(value), resource.name);
  return value;
}

async function insert(op: OperationContext, entities: Entity[]): Promise<Result> {
  const { resource } = op;
  // Keys are filled and checked inside the resource's exclusive section (see OPERATIONS), so two inserts cannot take one key.
  if (resource.key) await fillKeys(resource.key, resource.schema, resource.storage, entities);
  const stored: Entity[] = [];
  for (const e of entities) stored.push(await prepare(op, e));
  // A storage that declares keys enforces them atomically (across instances); for others the service checks.
  if (resource.key && !resource.storage.declareKey) await checkUnique(resource.name, resource.key, resource.storage, stored);
  await resource.storage.write({ insert: stored });
  await resource.definition.afterWrite?.();
  await resource.hooks.afterInsert?.(stored, op.caller);
  await op.changed('Inserted', stored);
  return { kind: 'change', data: stored.map((e) => resource.output(e)), inserted: stored.length, ...versionOf(resource, stored) };
}

async function update(op: OperationContext, pairs: Array<{ target: Entity; patch: Entity }>): Promise<Entity[]> {
  const { resource } = op;
  const updates: Array<{ target: Entity; value: Entity }> = [];
  for (const { target, patch } of pairs) updates.push({ target, value: await prepare(op, merge(target, patch), target) });
  if (updates.length === 0) return [];
  await checkChangedKeys(resource, updates);
  await resource.storage.write({
    update: updates.map((u) => ({ target: targetOf(resource.storage, u.target, resource.key), value: u.value })),
  });
  await resource.definition.afterWrite?.();
  const values = updates.map((u) => u.value);
  await resource.hooks.afterUpdate?.(values, op.caller);
  await op.changed('Updated', values);
  return values;
}

/**
 * For a storage that does not enforce keys (no declareKey): 409 when an update gives an
 * entity a key another has. Within one process only, like checkUnique.
 */
async function checkChangedKeys(resource: Resource, updates: Array<{ target: Entity; value: Entity }>): Promise<void> {
  const key = resource.key;
  if (key === null || resource.storage.declareKey) return;
  const moved = updates.filter((u) => JSON.stringify(keyValues(u.target, key)) !== JSON.stringify(keyValues(u.value, key)));
  if (moved.length > 0)
    await checkUnique(
      resource.name,
      key,
      resource.storage,
      moved.map((u) => u.value),
    );
}

/** A change applied to an entity; property names match case-insensitively, so `name` updates `Name`. */
function merge(entity: Entity, change: Entity): Entity {
  const out: Entity = { ...entity };
  for (const key of Object.keys(change)) out[findKey(entity, key) ?? key] = change[key];
  return out;
}

/** `{ version }` of the one entity a write stored, for its ETag; nothing for several. */
function versionOf(resource: Resource, stored: Entity[]): { version?: string } {
  return stored.length === 1 ? { version: entityVersion(resource.storage, stored[0]) } : {};
}

function single(entities: Entity[], method: string): Entity {
  if (entities.length !== 1) throw new ServiceError('InvalidResourceEntity', `${method} takes one entity, not ${entities.length}`);
  return entities[0];
}

function guardMany(count: number, method: string, unsafe: boolean): void {
  if (count > 1 && !unsafe) {
    throw new ServiceError('AmbiguousMatch', `${method} would affect ${count} entities: add the meta-condition unsafe=true to confirm`);
  }
}

const post: Operation = async (op) => {
  const entities = await op.input();
  // Upserts decide insert-or-update from what they read: one at a time per resource, so two cannot both insert.
  if (op.query.meta.safepost) return op.resource.exclusive(() => safepost(op, entities));
  return op.resource.key ? op.resource.exclusive(() => insert(op, entities)) : insert(op, entities);
};

/** If-Match, then If-None-Match, against the versions of the entities the write would change. */
function checkPreconditions(op: OperationContext, matches: readonly Entity[]): void {
  checkVersions(op.resource.storage, op.ifMatch, matches);
  checkNoneMatch(op.resource.storage, op.ifNoneMatch, matches);
}

const put: Operation = async (op) => {
  const entity = single(await op.input(), 'PUT');
  const matches = await selectTargets(op.resource, op.query, op.rows, op.searchBudget);
  if (matches.length > 1)
    throw new ServiceError('AmbiguousMatch', `PUT matched ${matches.length} entities; it inserts or updates exactly one`);
  checkPreconditions(op, matches);
  if (matches.length === 0) {
    // Fill the properties the conditions fix (`/Product/Sku=C-1`) when the body leaves them out.
    // The schema's spelling of the property wins over the locator's (locators are case-insensitive).
    const declared = op.resource.schema?.properties;
    const filled: Entity = {};
    for (const c of op.query.conditions)
      if (c.op === '=' && !c.locator.isDotted && !Object.keys(entity).some((k) => k.toLowerCase() === c.locator.text.toLowerCase()))
        filled[(declared && findKey(declared, c.locator.text)) ?? c.locator.text] = literalValue(c.value);
    return insert(op, [{ ...filled, ...entity }]);
  }
  const data = await update(op, [{ target: matches[0], patch: entity }]);
  return { kind: 'change', data: data.map((e) => op.resource.output(e)), updated: data.length, ...versionOf(op.resource, data) };
};

const patch: Operation = async (op) => {
  const body = single(await op.input(), 'PATCH');
  const matches = await selectTargets(op.resource, op.query, op.rows, op.searchBudget);
  guardMany(matches.length, 'PATCH', op.query.meta.unsafe);
  checkPreconditions(op, matches);
  const data = await update(
    op,
    matches.map((target) => ({ target, patch: body })),
  );
  return { kind: 'change', data: data.map((e) => op.resource.output(e)), updated: data.length, ...versionOf(op.resource, data) };
};

const del: Operation = async (op) => {
  const { resource } = op;
  const matches = await selectTargets(resource, op.query, op.rows, op.searchBudget);
  guardMany(matches.length, 'DELETE', op.query.meta.unsafe);
  checkPreconditions(op, matches);
  if (matches.length > 0) {
    if (resource.hooks.beforeDelete) await resource.hooks.beforeDelete(matches, op.caller);
    await resource.storage.write({ delete: matches.map((e) => targetOf(resource.storage, e, resource.key)) });
    await resource.definition.afterWrite?.();
    await resource.hooks.afterDelete?.(matches, op.caller);
    await op.changed('Deleted', matches);
  }
  return { kind: 'change', data: [], deleted: matches.length };
};

/**
 * POST with safepost: one PUT per entity, matched on the listed properties among all
 * stored entities, in input order (a key inserted earlier in the same request is updated
 * by a later entity); everything in one all-or-nothing write.
 */
async function safepost(op: OperationContext, entities: Entity[]): Promise<Result> {
  const { resource } = op;
  const keys = op.query.meta.safepost!;
  const keyOf = (e: Entity) => JSON.stringify(keys.map((k) => k.get(e) ?? null));
  const index = new Map<string, Entity[]>();
  const toOutput = resource.definition.toOutput;
  // Matched on what clients see, so with toOutput every stored entity is looked at.
  const candidates = await collect(
    toOutput ? (await resource.storage.select(SELECT_ALL)).entities : await storedMatches(resource.storage, keys, entities),
  );
  for (const stored of candidates) {
    // Matched on what clients see: a hidden property cannot be probed by matching on it,
    // and a row the caller's rule hides is never matched (so never updated).
    const seen = toOutput ? toOutput(stored) : stored;
    if (op.rows !== null && !op.rows.test(seen)) continue;
    const k = keyOf(seen);
    const list = index.get(k);
    if (list) list.push(stored);
    else index.set(k, [stored]);
  }
  const inserts: Entity[] = [];
  const insertAt = new Map<string, number>();
  const updates = new Map<Entity, Entity>();
  const written: Array<() => Entity> = [];
  for (const [i, e] of entities.entries()) {
    const missing = keys.find((key) => key.get(e) === undefined);
    if (missing)
      throw new ServiceError('InvalidResourceEntity', `safepost: entity ${i} has no ${missing.text}, so it cannot be matched`, {
        data: { [missing.text]: 'is required by safepost' },
      });
    const k = keyOf(e);
    const pending = insertAt.get(k);
    if (pending !== undefined) {
      inserts[pending] = await prepare(op, merge(inserts[pending], e));
      continue;
    }
    const found = index.get(k) ?? [];
    if (found.length > 1)
      throw new ServiceError(
        'AmbiguousMatch',
        `safepost: ${found.length} entities match ${keys.map((key) => `${key.text}=${JSON.stringify(key.get(e) ?? null)}`).join(', ')}`,
      );
    if (found.length === 1) {
      const target = found[0];
      if (!updates.has(target)) written.push(() => updates.get(target)!);
      updates.set(target, await prepare(op, merge(updates.get(target) ?? target, e), target));
    } else {
      const i = inserts.push(await prepare(op, e)) - 1;
      insertAt.set(k, i);
      written.push(() => inserts[i]);
    }
  }
  const updated = [...updates].map(([target, value]) => ({ target, value }));
  if (resource.key && !resource.storage.declareKey) await checkUnique(resource.name, resource.key, resource.storage, inserts);
  await checkChangedKeys(resource, updated);
  await resource.storage.write({
    insert: inserts,
    update: updated.map((u) => ({ target: targetOf(resource.storage, u.target, resource.key), value: u.value })),
  });
  if (inserts.length || updated.length) await resource.definition.afterWrite?.();
  if (inserts.length) await resource.hooks.afterInsert?.(inserts, op.caller);
  if (updated.length)
    await resource.hooks.afterUpdate?.(
      updated.map((u) => u.value),
      op.caller,
    );
  await op.changed('Inserted', inserts);
  await op.changed(
    'Updated',
    updated.map((u) => u.value),
  );
  return { kind: 'change', data: written.map((w) => resource.output(w())), inserted: inserts.length, updated: updated.length };
}

/** A write that lost a race (its targets changed after it selected them) runs again from the start. */
function retryOnConflict(operation: Operation, attempts = 3): Operation {
  return async (op) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation(op);
      } catch (e) {
        if (attempt >= attempts || !ServiceError.is(e) || e.code !== 'Conflict') throw e;
      }
    }
  };
}

/**
 * A conditional write (If-Match) on a storage without stamps cannot have the storage
 * check the version atomically: it runs one at a time per resource instead, so no other
 * write of this process comes between the version check and the write.
 */
function conditional(operation: Operation): Operation {
  return (op) =>
    (op.ifMatch !== undefined || op.ifNoneMatch !== undefined) && !op.resource.storage.stamp
      ? op.resource.exclusive(() => operation(op))
      : operation(op);
}

export const OPERATIONS: Record<string, (op: OperationContext) => Eventually<Result>> = {
  GET: get,
  HEAD: get,
  REPORT: report,
  POST: retryOnConflict(post),
  // The body is read before waiting for the resource, so a slow upload holds no one up.
  PUT: retryOnConflict(async (op) => {
    await op.input();
    return op.resource.exclusive(() => put(op));
  }),
  PATCH: retryOnConflict(conditional(patch)),
  DELETE: retryOnConflict(conditional(del)),
};
