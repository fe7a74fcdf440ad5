/**
 * Entity keys (docs/keys.md): a resource may declare `key`, one property or several. A bare
 * value in the conditions position addresses it (`/Person/7` is `/Person/Id=7`; a composite
 * key takes its values in order, comma-separated: `/Order/7,3`); POST fills a missing key
 * (integers: the next value; otherwise a UUID); an insert whose key is taken is 409.
 */
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { Condition } from '../grammar/parse.js';
import { compileConditions, type Entity } from '../query/conditions.js';
import { parseKeyLiteral, parseLiteral } from '../grammar/literal.js';
import { findKey, Locator } from '../grammar/locator.js';
import type { JsonSchema } from '../query/schema-types.js';
import { SELECT_ALL, type Storage } from '../storage/storage.js';
import { storageNextKeys, storageSelect } from '../storage/clock.js';

/** The declared key as a list of property names, or null. */
export function keyProperties(key: string | readonly string[] | undefined, resource: string): readonly string[] | null {
  if (key === undefined) return null;
  const names = typeof key === 'string' ? [key] : [...key];
  if (names.length === 0 || names.some((n) => typeof n !== 'string' || !/^[^./&=<>!,]+$/.test(n))) {
    throw new Error(`Invalid key of '${resource}': name one property or several (no dots, commas or operator characters)`);
  }
  return names;
}

/** The conditions a bare value stands for; 400 naming the condition form when the resource has no key. */
export function keyConditions(
  resource: string,
  key: readonly string[] | null,
  bare: string,
  parts: readonly string[] = bare.split(','),
): Condition[] {
  if (key === null) {
    throw new ServiceError(
      'InvalidConditionOperator',
      `'${bare}' has no operator, and '${resource}' declares no key for a bare value to address: write a condition such as /${resource}/id=${bare} (<property>=<value>)`,
    );
  }
  // Split before decoding (`parts`), so an encoded comma (`%2C`) stays inside a value.
  const values = key.length === 1 ? [bare] : parts;
  if (values.length !== key.length) {
    throw new ServiceError(
      'InvalidConditionSyntax',
      `'${resource}' has a key of ${key.length} properties (${key.join(', ')}): write its values in that order, comma-separated, as in /${resource}/${key.map((k) => `<${k}>`).join(',')}`,
    );
  }
  return key.map((name, i) => ({
    locator: new Locator(name),
    op: '=' as const,
    value: parseKeyLiteral(values[i]),
    text: `${name}=${values[i]}`,
  }));
}

/** Whether the schema says a key property holds whole numbers. */
function integerKey(schema: JsonSchema | undefined, name: string): boolean | undefined {
  const property = (schema as { properties?: Record<string, { type?: string | string[] }> } | undefined)?.properties?.[name];
  if (property?.type === undefined) return undefined;
  const types = Array.isArray(property.type) ? property.type : [property.type];
  return types.includes('integer') || types.includes('number');
}

/** Whether an entity lacks a value (missing or null) at one of the key's properties. */
export function lacksKey(e: Entity, key: readonly string[]): boolean {
  return key.some((k) => {
    const found = findKey(e, k);
    return found === undefined || e[found] === null || e[found] === undefined;
  });
}

/**
 * Fills a missing single key in each entity: the next whole number after the largest
 * stored (and earlier in the batch) when the key holds numbers, else a UUID. A storage
 * with nextKeys reserves the numbers (atomic across instances); otherwise call while the
 * resource's writes are serialized, so two POSTs of this process cannot take one number.
 * An entity that lacks its key is replaced in `entities` by a copy holding it: the objects
 * given are not changed, so a POST run again after a Conflict generates its keys again.
 */
export async function fillKeys(
  key: readonly string[],
  schema: JsonSchema | undefined,
  storage: Storage,
  entities: Entity[],
): Promise<void> {
  const missing = entities.filter((e) => lacksKey(e, key));
  if (missing.length === 0) return;
  if (key.length > 1)
    throw new ServiceError(
      'InvalidResourceEntity',
      `Every entity needs its key (${key.join(', ')}): a key of several properties is not generated`,
    );
  const name = key[0];
  let numeric = integerKey(schema, name);
  let next = 1;
  if (numeric !== false && storage.nextKeys) {
    // Reserved by the storage, so instances sharing it never take one number (docs/keys.md).
    let sawOther = false;
    for (const e of entities) {
      const k = findKey(e, name);
      const v = k === undefined ? undefined : e[k];
      if (typeof v === 'number' && Number.isInteger(v)) next = Math.max(next, v + 1);
      else if (v !== undefined && v !== null) sawOther = true;
    }
    const first = numeric === undefined && sawOther ? null : await storageNextKeys(storage, missing.length, next, numeric === undefined);
    numeric = first !== null;
    if (first !== null) next = first;
  } else if (numeric !== false) {
    const stored = await largestKeys(storage, name);
    let sawOther = false;
    const consider = (e: Entity) => {
      const k = findKey(e, name);
      const v = k === undefined ? undefined : e[k];
      if (typeof v === 'number' && Number.isInteger(v)) next = Math.max(next, v + 1);
      else if (v !== undefined && v !== null) sawOther = true;
    };
    for await (const e of stored as AsyncIterable<Entity>) consider(e);
    for (const e of entities) consider(e);
    // Schemaless: numbers when the stored keys are numbers (or there are none yet), like json-server.
    numeric ??= !sawOther;
  }
  for (let i = 0; i < entities.length; i++) {
    const e = entities[i];
    if (lacksKey(e, key)) entities[i] = { ...e, [findKey(e, name) ?? name]: numeric ? next++ : randomUUID() };
  }
}

/**
 * What the next key is computed from: the entity with the largest key when the storage can
 * find it (an ordered, paged select: one row from an index in SQL, where reading every row
 * would meet the storage's row cap), else every entity. Descending order puts objects and
 * strings before numbers, so a whole number on top means no text or object key is stored;
 * anything else on top is settled by looking at every key, as without push-down.
 */
async function largestKeys(storage: Storage, name: string): Promise<Iterable<Entity> | AsyncIterable<Entity>> {
  const top = await storageSelect(storage, {
    conditions: [],
    predicate: null,
    order: { locator: new Locator(name), descending: true },
    offset: 0,
    limit: 1,
  });
  if (!top.pagingApplied) return top.entities;
  for await (const e of top.entities as AsyncIterable<Entity>) {
    const k = findKey(e, name);
    const v = k === undefined ? undefined : e[k];
    if (typeof v === 'number' && Number.isInteger(v)) return [e];
    // Something other than a whole number on top.
    return (await storageSelect(storage, SELECT_ALL)).entities;
  }
  return [];
}

/** 409 Conflict when an entity to insert has the key of a stored entity or of another in the batch. */
export async function checkUnique(resource: string, key: readonly string[], storage: Storage, entities: readonly Entity[]): Promise<void> {
  const seen = new Set<string>();
  for (const e of entities) {
    const values = key.map((k) => e[findKey(e, k) ?? k]);
    const shown = key.map((k, i) => `${k}=${JSON.stringify(values[i])}`).join('&');
    const id = JSON.stringify(values);
    if (seen.has(id)) throw new ServiceError('Conflict', `Two entities of the body have the key ${shown}`);
    seen.add(id);
    for await (const _ of selectEqual(
      storage,
      key.map((k) => new Locator(k)),
      values,
    ))
      throw new ServiceError('Conflict', `'${resource}' already has an entity with the key ${shown}`);
  }
}

/** Stored entities whose values at `locators` are `values` as `=` compares them (callers needing exact equality recheck). */
async function* selectEqual(storage: Storage, locators: readonly Locator[], values: readonly unknown[]): AsyncGenerator<Entity> {
  const conditions: Condition[] = locators.map((l, i) => ({
    locator: l,
    op: '=',
    value: literalOf(values[i]),
    text: `${l.text}=${String(values[i])}`,
  }));
  const predicate = compileConditions(conditions);
  const found = await storageSelect(storage, { conditions, predicate, order: null, offset: 0, limit: -1 });
  for await (const s of found.entities as AsyncIterable<Entity>) if (found.conditionsApplied || predicate === null || predicate(s)) yield s;
}

/** Up to this many distinct matches are looked up one select each; more read every entity once. */
const LOOKUPS = 32;

/**
 * The stored entities that can match `entities` on `locators` exactly (safepost): for a few
 * distinct matches of plain values, one `=` select each (an index in SQL, never past a
 * storage's row cap, no whole-table read); otherwise, or when some value is null, an object
 * or a number that does not survive as a literal, every stored entity.
 */
export async function storedMatches(
  storage: Storage,
  locators: readonly Locator[],
  entities: readonly Entity[],
): Promise<Iterable<Entity> | AsyncIterable<Entity>> {
  const exact = (e: Entity) => JSON.stringify(locators.map((l) => l.get(e) ?? null));
  const distinct = new Map<string, unknown[]>();
  for (const e of entities)
    distinct.set(
      exact(e),
      locators.map((l) => l.get(e)),
    );
  const plain = (v: unknown) => {
    const literal = literalOf(v);
    return literal.kind === 'string' || (literal.kind === 'raw' && (literal.number === v || literal.boolean === v));
  };
  if (distinct.size > LOOKUPS || ![...distinct.values()].every((values) => values.every(plain)))
    return (await storageSelect(storage, SELECT_ALL)).entities;
  const found: Entity[] = [];
  for (const [id, values] of distinct)
    for await (const s of selectEqual(storage, locators, values)) {
      // Only exact matches: `=` is looser (so one stored entity could answer two lookups).
      if (exact(s) === id) found.push(s);
    }
  return found;
}

/** A stored value as a literal that matches exactly that value (a string stays a string). */
function literalOf(value: unknown): Condition['value'] {
  if (value === null || value === undefined) return { kind: 'null' };
  if (typeof value === 'string') return { kind: 'string', value };
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return parseLiteral(String(value));
  // An object or array has no literal: this text equals no JSON value's, and storedMatches scans for it.
  return { kind: 'raw', text: '[object Object]' };
}
