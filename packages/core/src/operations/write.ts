// POST, PUT, PATCH and DELETE (hooks, validation, keys, preconditions, safepost), and the
// operation each method runs; GET, HEAD and REPORT are in read.ts.
import { ServiceError } from '../errors.js';
import type { Eventually } from '../util/eventually.js';
import { checkUnique, fillKeys, lacksKey, storedMatches } from '../model/key.js';
import { cascadeOf } from './cascade.js';
import type { Operation, OperationContext, Written } from './context.js';
import type { Entity } from '../query/conditions.js';
import { literalValue } from '../grammar/literal.js';
import { findKey } from '../grammar/locator.js';
import { get, report, selectTargets } from './read.js';
import { collect } from './plan.js';
import type { Resource } from '../model/resources.js';
import type { Result } from './results.js';
import { checkRow } from '../model/rules.js';
import { isKeyTaken, keyValues, SELECT_ALL, targetOf } from '../storage/storage.js';
import { checkNoneMatch, checkVersions, entityVersion } from '../storage/version.js';
import { storageSelect } from '../storage/clock.js';
import { nextTurn } from '../util/turn.js';

/** Entities prepared (hooks, validation) between two turns of the event loop in a large write (docs/limits.md#large-work). */
const PREPARED_PER_TURN = 1000;

async function prepare(op: OperationContext, entity: Entity, existing?: Entity, sent: Entity = entity): Promise<Entity> {
  const { resource, caller } = op;
  const { beforeInsert, beforeUpdate, beforeWrite: before } = resource.hooks;
  if (existing === undefined && beforeInsert) entity = (await beforeInsert(entity, caller)) ?? entity;
  if (existing !== undefined && beforeUpdate) entity = (await beforeUpdate(entity, existing, caller)) ?? entity;
  // A Standard Schema validator's output (defaults filled, unknown keys dropped) is what is stored.
  const value = await resource.validate(
    before ? await before(entity, { operation: existing ? 'update' : 'insert', existing, authorize: op.authorize, caller, sent }) : entity,
  );
  // A caller cannot write a row into (or move one out to) rows it may not see.
  checkRow(op.rows, resource.output(value), resource.name);
  return value;
}

/**
 * The entities an insert stores: missing keys generated, then hooks and validation. POST,
 * PUT and safepost's inserts all come through here, so every insert gets its key the same way.
 */
async function newEntities(op: OperationContext, entities: Entity[]): Promise<Entity[]> {
  const { resource } = op;
  // Keys are filled and checked inside the resource's exclusive section (see OPERATIONS), so two inserts cannot take one key.
  // On a copy of the list: the request's own entities keep no generated key for a run after a Conflict.
  if (resource.key) await fillKeys(resource.key, resource.schema, resource.storage, (entities = entities.slice()));
  const stored: Entity[] = [];
  for (let i = 0; i < entities.length; i++) {
    // Awaiting a hook is a microtask, not a turn: a large write gives other requests theirs now and then.
    if (i > 0 && i % PREPARED_PER_TURN === 0) await nextTurn();
    stored.push(await prepare(op, entities[i]));
  }
  return stored;
}

async function insert(op: OperationContext, entities: Entity[]): Promise<Result> {
  const { resource } = op;
  const stored = await newEntities(op, entities);
  // A storage that declares keys enforces them atomically (across instances); for others the service checks.
  if (resource.key && !resource.storage.declareKey) await checkUnique(resource.name, resource.key, resource.storage, stored);
  const written = await op.write({ insert: stored }, [['Inserted', stored]]);
  await resource.hooks.afterWrite?.();
  await resource.hooks.afterInsert?.(stored, op.caller);
  await written.raise();
  return { kind: 'change', data: stored.map((e) => resource.output(e)), inserted: stored.length, ...versionOf(resource, stored) };
}

async function update(op: OperationContext, pairs: Array<{ target: Entity; patch: Entity }>): Promise<Entity[]> {
  const { resource } = op;
  const updates: Array<{ target: Entity; value: Entity }> = [];
  for (let i = 0; i < pairs.length; i++) {
    if (i > 0 && i % PREPARED_PER_TURN === 0) await nextTurn();
    const { target, patch } = pairs[i];
    updates.push({ target, value: await prepare(op, merge(target, patch), target, patch) });
  }
  if (updates.length === 0) return [];
  await checkChangedKeys(resource, updates);
  const values = updates.map((u) => u.value);
  const written = await op.write(
    { update: updates.map((u) => ({ target: targetOf(resource.storage, u.target, resource.key), value: u.value })) },
    [['Updated', values]],
  );
  await resource.hooks.afterWrite?.();
  await resource.hooks.afterUpdate?.(values, op.caller);
  await written.raise();
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
  return op.resource.key && !keysAtomic(op.resource, entities) ? op.resource.exclusive(() => insert(op, entities)) : insert(op, entities);
};

/**
 * Whether the storage makes an insert's key safe by itself: it refuses a taken key
 * atomically (declareKey) and, for an entity without its key, reserves the number
 * (nextKeys). Such inserts need not wait for each other, so a storage that makes writes
 * durable in groups (the CLI's journal) saves concurrent POSTs with one fsync.
 */
function keysAtomic(resource: Resource, entities: readonly Entity[]): boolean {
  const { storage, key } = resource;
  if (!storage.declareKey) return false;
  if (storage.nextKeys) return true;
  return !entities.some((e) => lacksKey(e, key!));
}

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
      if (
        !('anyOf' in c) &&
        c.op === '=' &&
        !c.locator.isDotted &&
        !Object.keys(entity).some((k) => k.toLowerCase() === c.locator.text.toLowerCase())
      )
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
  // Nothing to update is the client's to know (json-server answers 404 too); GET keeps 204 (docs/methods.md).
  if (matches.length === 0) throw new ServiceError('NotFound', `PATCH matched no entity of '${op.resource.name}': nothing was changed`);
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
    // Related entities a relation's onDelete concerns: checked (409, 403) before any hook or write.
    const steps = [...(await cascadeOf(op, resource, matches)), { resource, entities: matches }];
    for (const step of steps) await step.resource.hooks.beforeDelete?.(step.entities, op.caller);
    // The related entities first: a failure half-way leaves no entity whose parent is gone.
    const written: Written[] = [];
    for (const { resource: r, entities } of steps)
      written.push(await op.write({ delete: entities.map((e) => targetOf(r.storage, e, r.key)) }, [['Deleted', entities]], r));
    for (const { resource: r, entities } of steps) {
      await r.hooks.afterWrite?.();
      await r.hooks.afterDelete?.(entities, op.caller);
    }
    for (const w of written) await w.raise();
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
    toOutput ? (await storageSelect(resource.storage, SELECT_ALL)).entities : await storedMatches(resource.storage, keys, entities),
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
  // New entities as the body gives them (later ones merged in); keyed and prepared once all are known.
  const added: Entity[] = [];
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
      added[pending] = merge(added[pending], e);
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
      updates.set(target, await prepare(op, merge(updates.get(target) ?? target, e), target, e));
    } else {
      const i = added.push({ ...e }) - 1;
      insertAt.set(k, i);
      written.push(() => inserts[i]);
    }
  }
  const inserts = await newEntities(op, added);
  const updated = [...updates].map(([target, value]) => ({ target, value }));
  if (resource.key && !resource.storage.declareKey) await checkUnique(resource.name, resource.key, resource.storage, inserts);
  await checkChangedKeys(resource, updated);
  const values = updated.map((u) => u.value);
  const change = await op.write(
    {
      insert: inserts,
      update: updated.map((u) => ({ target: targetOf(resource.storage, u.target, resource.key), value: u.value })),
    },
    [
      ['Inserted', inserts],
      ['Updated', values],
    ],
  );
  if (inserts.length || updated.length) await resource.hooks.afterWrite?.();
  if (inserts.length) await resource.hooks.afterInsert?.(inserts, op.caller);
  if (updated.length) await resource.hooks.afterUpdate?.(values, op.caller);
  await change.raise();
  return { kind: 'change', data: written.map((w) => resource.output(w())), inserted: inserts.length, updated: updated.length };
}

/**
 * A write that lost a race (its targets changed after it selected them, or a key it
 * generated was taken meanwhile) runs again from the start, unless `again` says that
 * running it again cannot end otherwise.
 */
function retryOnConflict(
  operation: Operation,
  again: (op: OperationContext, error: ServiceError) => Eventually<boolean> = () => true,
  attempts = 3,
): Operation {
  return async (op) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation(op);
      } catch (e) {
        if (attempt >= attempts || !ServiceError.is(e) || e.code !== 'Conflict' || !(await again(op, e))) throw e;
      }
    }
  };
}

/**
 * Whether a POST refused with Conflict may succeed if run again: a write that lost a race
 * may, as may a safepost (it reads its targets again) and a key the service or a hook
 * makes (it may be free the next time). A key the client sent that another entity holds
 * would be refused again: 409 at once (a body of 100,000 entities is not prepared and
 * checked three times).
 */
async function postMayRetry(op: OperationContext, error: ServiceError): Promise<boolean> {
  const { resource } = op;
  const { beforeInsert, beforeWrite } = resource.hooks;
  if (!isKeyTaken(error) || op.query.meta.safepost || resource.key === null || beforeInsert || beforeWrite) return true;
  const key = resource.key;
  return (await op.input()).some((e) => lacksKey(e, key));
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
  POST: retryOnConflict(post, postMayRetry),
  // The body is read before waiting for the resource, so a slow upload holds no one up.
  PUT: retryOnConflict(async (op) => {
    await op.input();
    return op.resource.exclusive(() => put(op));
  }),
  PATCH: retryOnConflict(conditional(patch)),
  DELETE: retryOnConflict(conditional(del)),
};
