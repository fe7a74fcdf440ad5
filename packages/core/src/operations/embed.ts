// The `embed` meta-condition (docs/relations.md): each entity gets its related entities under
// the relation's name, a to-one relation's as an object or null, a to-many relation's as an
// array (at most maxEmbedded, in the related resource's key order). Evaluation order:
// conditions -> search -> embed -> add -> rename -> select -> distinct -> order -> offset ->
// limit; the entities are embedded after paging when nothing before it reads embedded values.
import { Locator } from '../grammar/locator.js';
import type { Relation } from '../model/relations.js';
import type { Resource } from '../model/resources.js';
import type { RowRule } from '../model/rules.js';
import type { Entity } from '../query/conditions.js';
import { evaluate, type CompiledQuery } from '../query/evaluate.js';
import { schemaSpelling } from '../query/schema-types.js';
import { withOutputNames } from './output-names.js';
import { distinctValues, readRelatedIn, type RelatedReads } from './related.js';

/**
 * The entities a GET with `embed` answers, embedded and projected; `paged: false` leaves
 * out offset and limit (a count). Without `embed` in `q`, none is embedded.
 */
export async function selectEmbedded(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  reads: RelatedReads,
  paged = true,
): Promise<Entity[]> {
  const relations = (q.meta.embed ?? []).map((name) => resource.relations.get(name)!);
  const embedded = new Set(relations.map((r) => r.name.toLowerCase()));
  const meta = paged ? q.meta : { ...q.meta, offset: 0, limit: -1 };
  const named = await withOutputNames(resource, { ...q, meta }, rows, relationNames(resource, q, embedded));
  if (embedsAfterPaging(q, embedded)) {
    // Conditions, search, order and page as any GET; then embed the page and project it.
    const base: CompiledQuery = { ...q, meta: { ...meta, add: null, rename: null, select: null, embed: null }, project: null };
    const page = await embedInto(resource, await reads.select(resource, base, rows, reads.budget), relations, reads);
    return named.project === null ? page : page.map(named.project);
  }
  // Something before paging reads embedded values: embed every selected entity, then the rest of the query.
  const base: CompiledQuery = {
    ...q,
    meta: { ...meta, add: null, rename: null, select: null, embed: null, distinct: false, order: null, offset: 0, limit: -1 },
    project: null,
    sourceOrder: null,
  };
  const all = await embedInto(resource, await reads.select(resource, base, rows, reads.budget), relations, reads);
  return evaluate(all, { ...named, conditions: [], predicate: null, search: null }, { conditionsApplied: true });
}

/** Whether no step before offset and limit (distinct, order) reads an embedded value. */
function embedsAfterPaging(q: CompiledQuery, embedded: ReadonlySet<string>): boolean {
  if (q.meta.distinct) return false;
  if (q.meta.order === null) return true;
  return q.sourceOrder !== null && q.sourceOrder.every((l) => !embedded.has(l.segments[0].toLowerCase()));
}

/**
 * The output names of added and selected locators into an embedded relation: the
 * relation's name as declared, then the related resource's schema spelling (else as written).
 */
function relationNames(resource: Resource, q: CompiledQuery, embedded: ReadonlySet<string>): Map<Locator, string> {
  const names = new Map<Locator, string>();
  for (const l of [...(q.meta.add ?? []), ...(q.meta.select ?? [])]) {
    if (!embedded.has(l.segments[0].toLowerCase())) continue;
    const relation = resource.relations.of(l)!;
    const rest = l.segments.slice(1);
    const spelled =
      rest.length === 0
        ? undefined
        : relation.kind === 'many' && rest.length === 1 && rest[0].toLowerCase() === 'length'
          ? 'Length'
          : (schemaSpelling(relation.target.schema, rest) ?? rest.join('.'));
    names.set(l, spelled === undefined ? relation.name : `${relation.name}.${spelled}`);
  }
  return names;
}

/**
 * Copies of the entities with each relation's entities under its name: one read of the
 * related resource per relation for all of them (an IN list of their keys).
 */
async function embedInto(
  resource: Resource,
  entities: readonly Entity[],
  relations: readonly Relation<Resource>[],
  reads: RelatedReads,
): Promise<Entity[]> {
  const out = entities.map((e) => ({ ...e }));
  for (const relation of relations) {
    const why = `embed=${relation.name} on '${resource.name}'`;
    const { target, via, references } = relation;
    if (relation.kind === 'one') {
      const related = await readRelatedIn(target, references, distinctValues(out, via), null, reads, why);
      const byKey = new Map<unknown, Entity>();
      for (const r of related) {
        const k = references.get(r);
        if (!byKey.has(k)) byKey.set(k, r);
      }
      for (const e of out) e[relation.name] = byKey.get(via.get(e)) ?? null;
      continue;
    }
    const order = target.key?.map((k) => ({ locator: new Locator(k), descending: false })) ?? null;
    const related = await readRelatedIn(target, via, distinctValues(out, references), order, reads, why);
    const groups = new Map<unknown, Entity[]>();
    for (const r of related) {
      const k = via.get(r);
      let group = groups.get(k);
      if (group === undefined) groups.set(k, (group = []));
      if (group.length < relation.maxEmbedded) group.push(r);
    }
    for (const e of out) e[relation.name] = groups.get(references.get(e)) ?? [];
  }
  return out;
}
