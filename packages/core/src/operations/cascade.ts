// What a DELETE does to related entities (docs/relations.md#deleting): a to-many relation
// with `onDelete: 'restrict'` refuses the DELETE (409 Conflict naming the relation) while
// the entities being deleted still have related entities there; `onDelete: 'cascade'`
// deletes those too, and theirs in turn, through the related resource's storage, hooks and
// change events. A cascade obeys the caller's rights as a direct DELETE of the related
// resource would: without DELETE on it, or with a related entity outside the caller's row
// rule for DELETE, the whole request is 403 and nothing is deleted. Every check runs before
// anything is written.
import { ServiceError } from '../errors.js';
import type { Caller } from '../model/caller.js';
import type { Relation } from '../model/relations.js';
import type { Resource } from '../model/resources.js';
import type { Entity } from '../query/conditions.js';
import { NO_META } from '../query/meta-conditions.js';
import { typeConditions } from '../query/schema-types.js';
import { keyValues } from '../storage/storage.js';
import { storageSelect } from '../storage/clock.js';
import type { OperationContext } from './context.js';
import { collect } from './plan.js';
import { distinctValues, inList } from './related.js';

/** Entities of one resource a cascade deletes. */
export interface CascadeStep {
  resource: Resource;
  entities: Entity[];
}

/** Most key values one read of related entities carries (as embed's IN lists). */
const IN_LIST_MAX = 1000;

/**
 * The related entities deleting `entities` of `resource` deletes too, deepest first (each
 * step's own related entities come before it), so a delete that fails half-way never
 * leaves an entity whose parent is gone. Throws 409 for a restrict relation that still has
 * related entities, 403 for a cascade the caller may not make; [] when no relation says onDelete.
 */
export async function cascadeOf(op: OperationContext, resource: Resource, entities: readonly Entity[]): Promise<CascadeStep[]> {
  const steps: CascadeStep[] = [];
  const planned = new Set<string>(entities.map((e) => identity(resource, e)));
  await visit(op, resource, entities, steps, planned);
  return steps;
}

async function visit(
  op: OperationContext,
  resource: Resource,
  parents: readonly Entity[],
  steps: CascadeStep[],
  planned: Set<string>,
): Promise<void> {
  if (parents.length === 0 || resource.relations.size === 0) return;
  for (const relation of resource.relations.deleting()) {
    const related = (await storedRelated(relation, distinctValues(parents, relation.references))).filter(
      (e) => !planned.has(identity(relation.target, e)),
    );
    if (related.length === 0) continue;
    if (relation.onDelete === 'restrict')
      throw new ServiceError(
        'Conflict',
        `'${resource.name}' still has related entities in its relation '${relation.name}' (${relation.target.name}, onDelete: 'restrict'): delete them first; nothing was deleted`,
        { data: { Relation: relation.name, Resource: relation.target.name } },
      );
    checkRights(op, resource, relation, related);
    for (const e of related) planned.add(identity(relation.target, e));
    await visit(op, relation.target, related, steps, planned);
    steps.push({ resource: relation.target, entities: related });
  }
}

/** 403 unless the caller could DELETE every one of `related` directly (docs/relations.md#deleting). */
function checkRights(op: OperationContext, resource: Resource, relation: Relation<Resource>, related: readonly Entity[]): void {
  const target = relation.target;
  const why = `Deleting from '${resource.name}' deletes its related entities in '${relation.name}' (onDelete: 'cascade')`;
  if (!target.allows('DELETE'))
    throw new ServiceError('Forbidden', `${why}, but '${target.name}' does not allow DELETE; nothing was deleted`);
  try {
    op.authorize(target.name, 'DELETE');
  } catch (e) {
    if (!ServiceError.is(e) || e.code !== 'Forbidden') throw e;
    throw new ServiceError('Forbidden', `${why}, which the caller may not delete from '${target.name}'; nothing was deleted`);
  }
  const caller: Caller = { ...op.caller, method: 'DELETE' };
  const rows = target.rows(caller, 'DELETE');
  if (rows !== null && !related.every((e) => rows.test(target.output(e))))
    throw new ServiceError(
      'Forbidden',
      `${why}, and some of them are outside the rows the caller may delete from '${target.name}'; nothing was deleted`,
    );
}

/** Every stored entity of the relation's target whose `via` holds one of `values` (whatever the caller may see: integrity). */
async function storedRelated(relation: Relation<Resource>, values: readonly unknown[]): Promise<Entity[]> {
  const { target, via } = relation;
  const out: Entity[] = [];
  for (let i = 0; i < values.length; i += IN_LIST_MAX) {
    const item = inList(via, values.slice(i, i + IN_LIST_MAX));
    if (item === undefined) continue;
    const q = target.compile(typeConditions([item], target.schema), NO_META);
    const result = await storageSelect(target.storage, {
      conditions: q.conditions,
      predicate: q.predicate,
      order: null,
      offset: 0,
      limit: -1,
    });
    const entities = await collect(result.entities);
    // One push per entity: a spread of a caller-sized array into a call overflows the stack past ~120,000 (docs/limits.md).
    for (const e of result.conditionsApplied || q.predicate === null ? entities : entities.filter(q.predicate)) out.push(e);
  }
  return out;
}

/** One stored entity's identity within its resource: its key, or (keyless) all of it. */
function identity(resource: Resource, e: Entity): string {
  return `${resource.name}\u0000${JSON.stringify(resource.key ? keyValues(e, resource.key) : e)}`;
}
