import type { Entity } from './conditions.js';
import { findKey, type Locator } from '../grammar/locator.js';
import type { MetaConditions } from './meta-conditions.js';
import type { Projection } from './projection.js';

/**
 * distinct: the first of each group of outputs with the same JSON text, in storage order.
 *
 * When the output is a plain `select` of top-level properties (no add, no rename), two
 * outputs are equal exactly when each selected property has the same name and the same
 * JSON value, so the stored entities are compared on those values without building an
 * output object or its JSON text per entity; only the first of each group is projected.
 * Anything else is compared on the JSON text of the projected output.
 */
export function distinctOutputs(matches: readonly Entity[], meta: MetaConditions, project: Projection | null): Entity[] {
  const select = meta.select;
  if (project !== null && select !== null && meta.add === null && meta.rename === null && select.every((l) => !l.isDotted)) {
    const firsts = select.length === 1 ? firstByValue(matches, select[0]) : firstByKey(matches, select);
    return firsts.map(project);
  }
  return byJson(project === null ? matches : matches.map(project));
}

function byJson(entities: readonly Entity[]): Entity[] {
  const seen = new Set<string>();
  const out: Entity[] = [];
  for (const e of entities) {
    const key = JSON.stringify(e);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(e);
    }
  }
  return out;
}

function isPrimitive(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** A primitive as its JSON equality class (non-finite numbers are JSON null; -0 is 0 in a Set). */
function jsonPrimitive(v: string | number | boolean | null): unknown {
  return typeof v === 'number' && !Number.isFinite(v) ? null : v;
}

/** The output name and value of one selected property, as the projection writes them. */
function selected(e: Entity, locator: Locator): [string, unknown] {
  const key = findKey(e, locator.text);
  return key === undefined ? [locator.canonical(), null] : [key, e[key]];
}

/**
 * One selected property. The output is `{ <name>: value }`, where the name is the entity's
 * own spelling (or the locator's when it has none, value null). Outputs under the
 * locator's spelling with a primitive value are grouped on the value itself (a Set
 * member: 1 and "1" differ, as in JSON), the rest on the JSON text of name and value.
 */
function firstByValue(matches: readonly Entity[], locator: Locator): Entity[] {
  const text = locator.text;
  const exact = new Set<unknown>();
  const other = new Set<string>();
  const out: Entity[] = [];
  for (let i = 0; i < matches.length; i++) {
    const e = matches[i];
    let v: unknown = e[text];
    let name = text;
    // Only a primitive read under the exact spelling is sure to be the own property.
    if (!isPrimitive(v)) [name, v] = selected(e, locator);
    if (name === text && isPrimitive(v)) {
      const member = jsonPrimitive(v);
      if (exact.has(member)) continue;
      exact.add(member);
    } else {
      const k = `${JSON.stringify(name)}:${JSON.stringify(v)}`;
      if (other.has(k)) continue;
      other.add(k);
    }
    out.push(e);
  }
  return out;
}

/** Several selected properties: grouped on one self-delimiting text of every name and value. */
function firstByKey(matches: readonly Entity[], select: readonly Locator[]): Entity[] {
  const seen = new Set<string>();
  const out: Entity[] = [];
  for (const e of matches) {
    let k = '';
    for (const l of select) {
      const [name, v] = selected(e, l);
      k += `${name.length}:${name}${part(v)}`;
    }
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(e);
  }
  return out;
}

function part(v: unknown): string {
  if (typeof v === 'string') return `s${v.length}:${v}`;
  if (typeof v === 'number') return Number.isFinite(v) ? `n${v};` : 'z';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (v === null) return 'z';
  const json = String(JSON.stringify(v));
  return `j${json.length}:${json}`;
}
