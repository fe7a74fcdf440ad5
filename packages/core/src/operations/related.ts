// Reads of a related resource on the caller's behalf (docs/relations.md): for `embed` and for
// conditions through a relation. Each is what the caller could GET directly: its rights on the
// related resource, that resource's row rule, hooks and toOutput. The key values of many
// entities go into one condition (an IN list), so a response costs one select per relation.
import { ServiceError } from '../errors.js';
import type { Condition, ConditionItem } from '../grammar/parse.js';
import type { Literal } from '../grammar/literal.js';
import { Locator } from '../grammar/locator.js';
import type { Caller } from '../model/caller.js';
import type { Resource } from '../model/resources.js';
import type { RowRule } from '../model/rules.js';
import type { Entity } from '../query/conditions.js';
import type { CompiledQuery } from '../query/evaluate.js';
import { NO_META, type OrderKey } from '../query/meta-conditions.js';
import { typeConditions } from '../query/schema-types.js';
import type { Eventually } from '../util/eventually.js';
import type { Budgets } from './plan.js';

/** The read path of a GET (operations/read.ts), given so this module does not import it. */
type SelectOutput = (resource: Resource, q: CompiledQuery, rows: RowRule | null, budget?: Budgets) => Eventually<Entity[]>;

/** What reading a related resource needs of the request. */
export interface RelatedReads {
  caller: Caller;
  /** The caller's rights on another resource (403 Forbidden). */
  authorize(resource: string, method: string): void;
  select: SelectOutput;
  budget?: Budgets;
}

/** Most values one IN list carries; more are read in several selects (SQL's parameters stay bounded). */
const IN_LIST_MAX = 1000;

/**
 * The entities of `target` the caller may GET that satisfy `items` (which may go through
 * the target's own relations), in `order`: its rights (403 otherwise), row rule, beforeRead
 * and afterRead hooks and toOutput apply as to a GET. `why` says what asked, for the 403.
 */
async function readRelated(
  target: Resource,
  items: readonly ConditionItem[],
  order: readonly OrderKey[] | null,
  reads: RelatedReads,
  why: string,
): Promise<Entity[]> {
  mayRead(target, reads, why);
  const caller: Caller = { ...reads.caller, method: 'GET' };
  await target.hooks.beforeRead?.(caller);
  const rows = target.rows(caller, 'GET');
  const { own, through } = target.relations.partition(items);
  const resolved = through.length > 0 ? await resolveThrough(target, through, reads) : [];
  if (resolved === null) return [];
  const conditions = [...(rows?.conditions ?? []), ...typeConditions(own, target.schema), ...resolved];
  const entities = await reads.select(
    target,
    target.compile(conditions, order === null ? NO_META : { ...NO_META, order }),
    rows,
    reads.budget,
  );
  if (!target.hooks.afterRead) return entities;
  return (await target.hooks.afterRead(entities, caller)) ?? entities;
}

/** 403 unless the caller may GET `target` directly. */
function mayRead(target: Resource, reads: RelatedReads, why: string): void {
  if (!target.allows('GET')) throw new ServiceError('Forbidden', `${why} reads '${target.name}', which does not allow GET`);
  reads.authorize(target.name, 'GET');
}

/**
 * The same entities as `readRelated` with `locator` equal to one of `values`, in as few
 * selects as the IN lists allow (one for up to IN_LIST_MAX values). With no values nothing
 * is read, but the caller's rights are checked all the same: an embed is refused whether or
 * not the entities have anything to embed.
 */
export async function readRelatedIn(
  target: Resource,
  locator: Locator,
  values: readonly unknown[],
  order: readonly OrderKey[] | null,
  reads: RelatedReads,
  why: string,
): Promise<Entity[]> {
  if (values.length === 0) {
    mayRead(target, reads, why);
    return [];
  }
  if (values.length <= IN_LIST_MAX) return readRelated(target, [inList(locator, values)!], order, reads, why);
  const out: Entity[] = [];
  for (let i = 0; i < values.length; i += IN_LIST_MAX)
    out.push(...(await readRelated(target, [inList(locator, values.slice(i, i + IN_LIST_MAX))!], order, reads, why)));
  return out;
}

/**
 * Condition items through relations made conditions on the resource's own properties: a
 * to-one `Customer.Name=Ann` is `CustomerId=<the keys of the customers named Ann the caller
 * may read>`; a to-many `Orders.Total>100` is `Id=<the CustomerId of every such order>`
 * (true when any related entity satisfies it). null when one item can match nothing.
 */
async function resolveThrough(resource: Resource, through: readonly ConditionItem[], reads: RelatedReads): Promise<ConditionItem[] | null> {
  const out: ConditionItem[] = [];
  for (const item of through) {
    const alternatives = 'anyOf' in item ? item.anyOf : [item];
    const own: Condition[] = [];
    const byRelation = new Map<string, Condition[]>();
    for (const c of alternatives) {
      const relation = resource.relations.of(c.locator);
      if (relation === undefined) {
        own.push(...(typeConditions([c], resource.schema) as Condition[]));
        continue;
      }
      if (!c.locator.isDotted)
        throw new ServiceError(
          'InvalidConditionSyntax',
          `Condition '${c.text}' names the relation '${relation.name}' of '${resource.name}': compare one of its properties, as in ${relation.name}.${relation.kind === 'one' ? relation.references.text : relation.via.text}${c.text.slice(c.locator.text.length)}`,
        );
      const inner: Condition = { ...c, locator: new Locator(c.locator.segments.slice(1).join('.')) };
      const list = byRelation.get(relation.name) ?? [];
      list.push(inner);
      byRelation.set(relation.name, list);
    }
    const made: Condition[] = [...own];
    for (const [name, conditions] of byRelation) {
      const relation = resource.relations.get(name)!;
      const related = await readRelated(
        relation.target,
        [conditions.length === 1 ? conditions[0] : { anyOf: conditions, text: item.text }],
        null,
        reads,
        `Condition '${item.text}'`,
      );
      // To-one: the related keys, held by `via` here; to-many: the values `via` there holds, this resource's key.
      const [read, here] = relation.kind === 'one' ? [relation.references, relation.via] : [relation.via, relation.references];
      for (const v of distinctValues(related, read)) made.push(equals(here, v)!);
    }
    if (made.length === 0) return null;
    out.push(made.length === 1 ? made[0] : { anyOf: made, text: item.text });
  }
  return out;
}

/** The scalar values (strings, numbers, booleans) at a locator, each once, in order of appearance. */
export function distinctValues(entities: readonly Entity[], locator: Locator): unknown[] {
  const seen = new Set<unknown>();
  for (const e of entities) {
    const v = locator.get(e);
    if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') seen.add(v);
  }
  return [...seen];
}

/** `locator = v1 | v2 | ...`; undefined for no values. */
export function inList(locator: Locator, values: readonly unknown[]): ConditionItem | undefined {
  const conditions = values.map((v) => equals(locator, v)).filter((c): c is Condition => c !== undefined);
  if (conditions.length <= 1) return conditions[0];
  return { anyOf: conditions, text: `${locator.text}=${conditions.map((c) => literalText(c.value)).join('|')}` };
}

/** `locator = value` comparing by type as stored (7 is not "7"). */
function equals(locator: Locator, value: unknown): Condition | undefined {
  let literal: Literal;
  if (typeof value === 'string') literal = { kind: 'string', value };
  else if (typeof value === 'number') literal = { kind: 'raw', text: String(value), number: value };
  else if (typeof value === 'boolean') literal = { kind: 'raw', text: String(value), boolean: value };
  else return undefined;
  return { locator, op: '=', value: literal, text: `${locator.text}=${literalText(literal)}` };
}

function literalText(literal: Literal): string {
  return literal.kind === 'string' ? `'${literal.value}'` : literal.kind === 'null' ? 'null' : literal.text;
}

/** Conditions no entity satisfies (`X=null&X!=null`), for a condition through a relation that no related entity met. */
function never(locator: Locator): Condition[] {
  return [
    { locator, op: '=', value: { kind: 'null' }, text: `${locator.text}=null` },
    { locator, op: '!=', value: { kind: 'null' }, text: `${locator.text}!=null` },
  ];
}

/**
 * The query with its conditions through relations (CompiledQuery.through) made conditions
 * on the resource's own properties; the query itself when it has none.
 */
export async function resolveQuery(resource: Resource, q: CompiledQuery, reads: RelatedReads): Promise<CompiledQuery> {
  if (q.through === undefined) return q;
  const resolved = (await resolveThrough(resource, q.through, reads)) ?? never(new Locator(resource.key?.[0] ?? 'Id'));
  return resource.compile([...q.conditions, ...resolved], q.meta);
}
