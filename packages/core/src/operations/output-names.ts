// The output names of `add` and of a dotted `select` (docs/uri.md, "Output names"): one name
// per locator for the whole query, so an entity gets the same key in every result, whatever
// else it and the other entities hold.
import { isPromise, type Eventually } from '../util/eventually.js';
import { compileConditions, type Entity } from '../query/conditions.js';
import { compileProjection, type OutputNames } from '../query/projection.js';
import type { CompiledQuery } from '../query/evaluate.js';
import { schemaSpelling } from '../query/schema-types.js';
import type { Locator } from '../grammar/locator.js';
import type { Resource } from '../model/resources.js';
import type { RowRule } from '../model/rules.js';
import type { SelectQuery, SelectResult } from '../storage/storage.js';
import { storageSelect } from '../storage/clock.js';

/**
 * The query with the names of its added values and dotted selected properties fixed: each
 * locator spelled as the resource's schema declares it; else as the first entity (storage
 * order) of the stored resource the caller may read spells it, the request's own
 * conditions aside; else as the caller wrote it. The stored resource is read only up to
 * the first entity that has every such locator: at once when the first one has them, all
 * of it when none does. `preset` names some of them already.
 */
export function withOutputNames(
  resource: Resource,
  q: CompiledQuery,
  rows: RowRule | null,
  preset?: ReadonlyMap<Locator, string>,
): Eventually<CompiledQuery> {
  const locators = named(q);
  if (locators.length === 0) return q;
  // `preset`: names fixed already (an embedded relation's, docs/relations.md).
  const names = new Map<Locator, string>(preset);
  for (const l of locators) {
    if (names.has(l)) continue;
    const name = schemaSpelling(resource.schema, l.segments);
    if (name !== undefined) names.set(l, name);
  }
  const missing = locators.filter((l) => !names.has(l));
  if (missing.length === 0) return projecting(q, names);
  const found = spelledInStorage(resource, missing, rows);
  const fill = (spelled: Map<Locator, string>) => {
    for (const l of missing) names.set(l, spelled.get(l) ?? l.text);
    return projecting(q, names);
  };
  return isPromise(found) ? Promise.resolve(found).then(fill) : fill(found);
}

/**
 * The locators whose output name is the resource's: every added one, and each dotted
 * selected one that reads the stored entity (not an added value, nor under a renamed name).
 */
function named(q: CompiledQuery): Locator[] {
  const { add, select, rename } = q.meta;
  const out: Locator[] = [...(add ?? [])];
  if (select !== null) {
    const made = new Set([...(add ?? []).map((l) => l.text.toLowerCase()), ...(rename ?? []).map((r) => r.to.toLowerCase())]);
    const moved = new Set((rename ?? []).map((r) => r.from.segments[0].toLowerCase()));
    for (const l of select)
      if (
        l.isDotted &&
        !made.has(l.text.toLowerCase()) &&
        !made.has(l.segments[0].toLowerCase()) &&
        !moved.has(l.segments[0].toLowerCase())
      )
        out.push(l);
  }
  return out;
}

function projecting(q: CompiledQuery, names: OutputNames): CompiledQuery {
  return { ...q, project: compileProjection(q.meta, names).project };
}

/** How the first entity the caller may read that has each locator spells it (absent: none has it). */
function spelledInStorage(resource: Resource, locators: readonly Locator[], rows: RowRule | null): Eventually<Map<Locator, string>> {
  // With a toOutput hook, rules apply to the output form (as a read applies them): to every stored entity made output.
  const through = resource.definition.toOutput !== undefined;
  const conditions = rows?.conditions ?? [];
  const predicate = compileConditions(conditions);
  const request: SelectQuery = {
    conditions: through ? [] : conditions,
    predicate: through ? null : predicate,
    order: null,
    offset: 0,
    limit: -1,
    // Read in batches as consumed (SQL), so finding the spelling early reads no more.
    stream: true,
  };
  // Only the members the locators start with (a hint: SQL then sends no more of each row).
  if (resource.storage.stamp && !through) request.select = locators;
  const selected = storageSelect(resource.storage, request);
  const scan = new Scan(resource, locators, rows?.filter ?? null, predicate);
  return isPromise(selected) ? Promise.resolve(selected).then((r) => scan.over(r, through)) : scan.over(selected, through);
}

class Scan {
  readonly spelled = new Map<Locator, string>();

  constructor(
    private readonly resource: Resource,
    private readonly locators: readonly Locator[],
    private readonly filter: ((e: Entity) => boolean) | null,
    private readonly predicate: ((e: Entity) => boolean) | null,
  ) {}

  over(result: SelectResult, through: boolean): Eventually<Map<Locator, string>> {
    const predicate = result.conditionsApplied && !through ? null : this.predicate;
    const entities = result.entities;
    if (Symbol.iterator in entities) {
      for (const e of entities) if (this.saw(e, predicate)) break;
      return this.spelled;
    }
    return this.overAsync(entities, predicate);
  }

  private async overAsync(entities: AsyncIterable<Entity>, predicate: ((e: Entity) => boolean) | null): Promise<Map<Locator, string>> {
    // Leaving the loop early closes the iterator: a streaming storage reads no further batch.
    for await (const e of entities) if (this.saw(e, predicate)) break;
    return this.spelled;
  }

  /** Learns the spellings one entity shows; true when every locator has one. */
  private saw(stored: Entity, predicate: ((e: Entity) => boolean) | null): boolean {
    const entity = this.resource.output(stored);
    if ((predicate !== null && !predicate(entity)) || (this.filter !== null && !this.filter(entity))) return false;
    for (const l of this.locators) {
      if (this.spelled.has(l)) continue;
      const name = l.spelledIn(entity);
      if (name !== undefined) this.spelled.set(l, name);
    }
    return this.spelled.size === this.locators.length;
  }
}
