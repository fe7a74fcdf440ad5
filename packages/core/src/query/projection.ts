import { ServiceError } from '../errors.js';
import type { Entity } from './conditions.js';
import { findKey, Locator } from '../grammar/locator.js';
import type { MetaConditions } from './meta-conditions.js';

export type Projection = (entity: Entity) => Entity;

/**
 * add -> rename -> select, compiled once per query. Returns null when the output is the
 * stored entity itself. `sourceOf` maps an output property back to the locator that
 * reads it from the stored entity, so order can be computed before projecting.
 */
export interface CompiledProjection {
  project: Projection | null;
  sourceOf(locator: Locator): Locator | null;
}

/** The output name of an added or dotted selected locator, the same for every entity. */
export type OutputNames = ReadonlyMap<Locator, string>;

/**
 * `names`: the output names of the `add` and dotted `select` locators (from the schema or
 * the stored resource, operations/output-names.ts); without one, each entity's own spelling.
 */
export function compileProjection(meta: MetaConditions, names?: OutputNames): CompiledProjection {
  const { add, rename, select } = meta;
  const renames = rename ?? [];
  const renamedAway = new Set(renames.filter((r) => !r.from.isDotted).map((r) => r.from.text.toLowerCase()));
  for (const r of renames) renamedAway.delete(r.to.toLowerCase());
  const targetOf = new Map(renames.map((r) => [r.to.toLowerCase(), r.from]));
  const addedNames = new Map((add ?? []).map((l) => [l.text.toLowerCase(), l]));

  for (const l of select ?? []) {
    // An added name (`Name.Length`) is an output key of its own, whatever rename did to `Name`.
    if (renamedAway.has(l.segments[0].toLowerCase()) && !addedNames.has(l.text.toLowerCase())) {
      throw new ServiceError('InvalidMetaConditionSyntax', `select: '${l.text}' no longer exists after rename`);
    }
  }

  const sourceOf = (l: Locator): Locator | null => {
    const name = l.text.toLowerCase();
    const head = l.segments[0].toLowerCase();
    if (addedNames.has(name)) return addedNames.get(name)!;
    if (renamedAway.has(head)) {
      throw new ServiceError('InvalidMetaConditionSyntax', `order: '${l.text}' no longer exists after rename`);
    }
    if (targetOf.has(name)) return targetOf.get(name)!;
    if (targetOf.has(head) || [...addedNames.keys()].some((k) => k.startsWith(`${head}.`))) return null;
    // A property that select leaves out still orders: it is read from the stored entity.
    return l;
  };

  if (!add && !rename && !select) return { project: null, sourceOf };
  if (!add && !rename) return { project: picking(select!, names), sourceOf };

  const project: Projection = (entity) => {
    let out: Entity = { ...entity };
    const added: string[] = [];
    if (add) {
      for (const l of add) {
        const name = names?.get(l) ?? l.canonical(entity);
        out[name] = l.get(entity) ?? null;
        added.push(name);
      }
    }
    for (const r of renames) {
      out = renameOne(out, r.from, r.to, entity);
      // A renamed added value is still an added value: it stays whatever select lists.
      const i = added.findIndex((name) => name.toLowerCase() === r.from.text.toLowerCase());
      if (i >= 0) added[i] = r.to;
    }
    if (select) {
      const picked = pick(out, select, names);
      for (const name of added) if (!(name in picked) && name in out) picked[name] = out[name];
      out = picked;
    }
    return out;
  };
  return { project, sourceOf };
}

/** The selected properties of `out`, in the order select names them. */
function pick(out: Entity, select: readonly Locator[], names: OutputNames | undefined): Entity {
  const picked: Entity = {};
  for (const l of select) {
    const flat = l.isDotted ? findKey(out, l.text) : undefined;
    if (flat !== undefined) {
      // An added value (`Name.Length`) is a flat key of the output.
      picked[flat] = out[flat];
    } else if (l.isDotted) {
      picked[names?.get(l) ?? l.canonical(out)] = l.get(out) ?? null;
    } else {
      const key = findKey(out, l.text);
      picked[key ?? l.canonical()] = key === undefined ? null : out[key];
    }
  }
  return picked;
}

/**
 * select alone: no copy of the entity first, and the entity itself when it is its own
 * output already (its own keys are the selected names, spelt and ordered as select names
 * them: a row a SQL storage cut, docs/storage.md), so a large page of cut rows is not
 * made twice.
 */
function picking(select: readonly Locator[], names: OutputNames | undefined): Projection {
  const plain = select.every((l) => !l.isDotted);
  return (entity) => (plain && isPicked(entity, select) ? entity : pick(entity, select, names));
}

function isPicked(entity: Entity, select: readonly Locator[]): boolean {
  let i = 0;
  for (const key in entity) {
    if (i === select.length || key !== select[i].text || !Object.prototype.hasOwnProperty.call(entity, key)) return false;
    i++;
  }
  return i === select.length;
}

/**
 * Renames one property, keeping its position (an added `Name.Length` is a key too); a
 * dotted source that is not a key reads the nested value and appends it under the new name.
 */
function renameOne(out: Entity, from: Locator, to: string, source: Entity): Entity {
  const key = findKey(out, from.text);
  if (key === undefined) {
    out[to] = from.isDotted ? (from.get(out) ?? from.get(source) ?? null) : null;
    return out;
  }
  const renamed: Entity = {};
  for (const k of Object.keys(out)) {
    if (k === key) renamed[to] = out[k];
    else if (k !== to) renamed[k] = out[k];
  }
  return renamed;
}
