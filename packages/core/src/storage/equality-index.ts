import type { Literal } from '../grammar/literal.js';
import type { Locator } from '../grammar/locator.js';
import type { Entity, SelectQuery } from './storage.js';

/**
 * Entities by the value of one property, the value itself as the map's key: a Map tells
 * the number 7 from the string "7", as the conditions do. A value one entity holds (the
 * usual case: keys) maps to that entity, not to an array of one: an array (or a token
 * string) per entity would cost a million-entity resource tens of megabytes.
 */
type Token = number | string;
type Buckets = Map<Token, Entity | Entity[]>;

/** A write as the index follows it: entities replaced (before, after), removed and appended. */
export interface IndexedChange {
  /** Every entity may have changed: the index forgets what it built. */
  readonly replaced?: boolean;
  readonly updated?: ReadonlyArray<readonly [Entity, Entity]>;
  readonly deleted?: readonly Entity[];
  readonly inserted?: readonly Entity[];
}

/** The largest number at one property, while every value there is a number or missing. */
interface Largest {
  locator: Locator;
  top: Entity | undefined;
  value: number;
  /** Entities holding `value`. */
  ties: number;
  /** Some value there is not a number: the order puts it first (not answered here). */
  other: boolean;
}

/**
 * Exact-value lookups on one resource, so that a query of one `=` condition (the core's
 * check that a new key is free, `/items/id=7`) does not scan every entity: without it a
 * keyed POST costs the size of the resource. Built per property on its first use, then kept
 * up to date from the writes (MemoryStorage's own, the CLI file store's journaled changes),
 * in the same turn as the entities they describe become visible. Answers only when at most
 * one entity matches (a bucket of several may not be in storage order); the caller scans otherwise.
 */
export class EqualityIndex {
  /** Property name in lower case (locators match case-insensitively) -> buckets. */
  private readonly byProperty = new Map<string, Buckets>();
  /** Locator text -> the largest number there (how the core finds the next key to generate). */
  private readonly largest = new Map<string, Largest>();
  /** Builds begun in slices (`building`): property -> the buckets so far, and how many entities they hold. */
  private readonly partial = new Map<string, { buckets: Buckets; at: number }>();

  /** `entities`: the resource's current entities, read when a property is first looked up. */
  constructor(private readonly entities: () => readonly Entity[]) {}

  /** The entities matching the query, or undefined when the index cannot tell (the caller scans). */
  lookup(query: SelectQuery): Entity[] | undefined {
    const predicate = query.predicate;
    const condition = query.conditions[0];
    if (query.conditions.length !== 1 || predicate === null || 'anyOf' in condition) return undefined;
    const { locator, op, value } = condition;
    if (op !== '=' || locator.isDotted) return undefined;
    const tokens = tokensOf(value);
    if (tokens === undefined) return undefined;
    const buckets = this.buckets(locator.text.toLowerCase());
    const hits: Entity[] = [];
    for (const token of tokens)
      for (const e of members(buckets.get(token))) {
        // The bucket holds candidates; the condition itself decides, exactly as a scan would.
        if (!hits.includes(e) && predicate(e)) hits.push(e);
        if (hits.length > 1) return undefined;
      }
    return hits;
  }

  /**
   * The entities holding a number or a string `value` at `property` (any spelling of the
   * name), or undefined for other values (the caller scans). Candidates: the caller decides.
   */
  holding(property: string, value: unknown): readonly Entity[] | undefined {
    const token = tokenOf(value);
    return token === undefined ? undefined : members(this.buckets(property.toLowerCase()).get(token));
  }

  /**
   * The first entity in descending order of one property, and nothing else (no conditions):
   * the core's query for the largest key before it generates the next. Answered while every
   * value there is a number or missing and one entity holds the largest; undefined otherwise.
   */
  top(query: SelectQuery): Entity[] | undefined {
    const order = query.order;
    if (query.conditions.length !== 0 || order === null || !order.descending || query.offset !== 0 || query.limit !== 1) return undefined;
    if (query.thenBy !== undefined && query.thenBy.length > 0) return undefined;
    let state = this.largest.get(order.locator.text);
    if (state === undefined) {
      state = { locator: order.locator, top: undefined, value: -Infinity, ties: 0, other: false };
      for (const e of this.entities()) consider(state, e);
      this.largest.set(order.locator.text, state);
    }
    return state.other || state.ties !== 1 ? undefined : [state.top!];
  }

  /**
   * Whether each of `count` entities holds exactly one number or string at `property` (any
   * spelling) that no other holds; builds the property's buckets (the CLI infers its key so).
   */
  unique(property: string, count: number): boolean {
    const buckets = this.buckets(property.toLowerCase());
    if (buckets.size !== count) return false;
    for (const bucket of buckets.values()) if (Array.isArray(bucket)) return false;
    return true;
  }

  /** Builds the buckets of a property now rather than at its first lookup. */
  prepare(property: string): void {
    this.buckets(property.toLowerCase());
  }

  /** Whether a lookup has built (or begun to build) anything to keep up to date. */
  get empty(): boolean {
    return this.byProperty.size === 0 && this.largest.size === 0 && this.partial.size === 0;
  }

  /** Follows a change just made visible. */
  apply(change: IndexedChange): void {
    this.partial.clear();
    this.followLargest(change);
    if (this.byProperty.size === 0) return;
    if (change.replaced) {
      this.byProperty.clear();
      return;
    }
    for (const [before, after] of change.updated ?? []) {
      this.remove(before);
      this.add(after);
    }
    for (const before of change.deleted ?? []) this.remove(before);
    for (const e of change.inserted ?? []) this.add(e);
  }

  /** Appended entities only raise a largest value; one that may have held it, removed, means counting again. */
  private followLargest(change: IndexedChange): void {
    if (this.largest.size === 0) return;
    for (const [text, state] of this.largest) {
      if (change.replaced || change.updated?.some(([before]) => mayHold(state, before)) || change.deleted?.some((e) => mayHold(state, e))) {
        this.largest.delete(text);
        continue;
      }
      for (const [, after] of change.updated ?? []) consider(state, after);
      for (const e of change.inserted ?? []) consider(state, e);
    }
  }

  private buckets(property: string): Buckets {
    let buckets = this.byProperty.get(property);
    if (buckets === undefined) {
      // A build begun in slices is finished here, now.
      const begun = this.partial.get(property);
      buckets = begun?.buckets ?? new Map();
      const entities = this.entities();
      for (let i = begun?.at ?? 0; i < entities.length; i++) this.addTo(property, buckets, entities[i]);
      this.partial.delete(property);
      this.byProperty.set(property, buckets);
    }
    return buckets;
  }

  /**
   * Builds a property's buckets `perSlice` entities at a time, yielding between slices
   * (MemoryStorage's large writes, docs/limits.md#large-work). A lookup meanwhile finishes
   * the build at once; a change meanwhile drops it (the next lookup builds it whole).
   */
  *building(property: string, perSlice: number): Generator<void, void, void> {
    property = property.toLowerCase();
    if (this.byProperty.has(property)) return;
    let begun = this.partial.get(property);
    if (begun === undefined) this.partial.set(property, (begun = { buckets: new Map(), at: 0 }));
    const entities = this.entities();
    while (begun.at < entities.length) {
      const end = Math.min(entities.length, begun.at + perSlice);
      for (; begun.at < end; begun.at++) this.addTo(property, begun.buckets, entities[begun.at]);
      if (end === entities.length) break;
      yield;
      if (this.partial.get(property) !== begun) return;
    }
    this.partial.delete(property);
    this.byProperty.set(property, begun.buckets);
  }

  private add(e: Entity): void {
    for (const [property, buckets] of this.byProperty) this.addTo(property, buckets, e);
  }

  private addTo(property: string, buckets: Buckets, e: Entity): void {
    for (const key in e) {
      if (!spells(key, property)) continue;
      const token = tokenOf(e[key]);
      if (token === undefined) continue;
      const bucket = buckets.get(token);
      if (bucket === undefined) buckets.set(token, e);
      else if (!Array.isArray(bucket)) {
        if (bucket !== e) buckets.set(token, [bucket, e]);
      } else if (!bucket.includes(e)) bucket.push(e);
    }
  }

  private remove(e: Entity): void {
    for (const [property, buckets] of this.byProperty) {
      for (const token of tokensAt(e, property)) {
        const bucket = buckets.get(token);
        if (bucket === e) buckets.delete(token);
        if (!Array.isArray(bucket)) continue;
        const i = bucket.indexOf(e);
        if (i < 0) continue;
        bucket.splice(i, 1);
        if (bucket.length === 1) buckets.set(token, bucket[0]);
      }
    }
  }
}

function members(bucket: Entity | Entity[] | undefined): readonly Entity[] {
  return bucket === undefined ? [] : Array.isArray(bucket) ? bucket : [bucket];
}

/** Whether an entity's property name is a spelling of `property` (lower case). */
function spells(key: string, property: string): boolean {
  return key.length === property.length && key.toLowerCase() === property;
}

/** The tokens of the values `e` holds at `property` (lower case; any spelling of the name matches). */
function tokensAt(e: Entity, property: string): Token[] {
  const tokens: Token[] = [];
  for (const key in e) {
    if (!spells(key, property)) continue;
    const token = tokenOf(e[key]);
    if (token !== undefined) tokens.push(token);
  }
  return tokens;
}

function tokenOf(value: unknown): Token | undefined {
  return typeof value === 'number' || typeof value === 'string' ? value : undefined;
}

/**
 * The values a `=` literal matches, as tokens (conditions.ts): a quoted string the same
 * string; a number the same number (and, a bare key's, a string spelled as written); plain text a string
 * spelled so. Booleans and dates compare in other ways: undefined (not answered here).
 */
function tokensOf(literal: Literal): Token[] | undefined {
  if (literal.kind === 'string') return [literal.value];
  if (literal.kind !== 'raw') return undefined;
  if (literal.number !== undefined) return literal.asText ? [literal.number, literal.text] : [literal.number];
  if (literal.boolean !== undefined || literal.date !== undefined) return undefined;
  return [literal.text];
}

function consider(state: Largest, e: Entity): void {
  const v = state.locator.get(e);
  if (v === undefined || v === null || Number.isNaN(v)) return;
  if (typeof v !== 'number') state.other = true;
  else if (v > state.value) {
    state.top = e;
    state.value = v;
    state.ties = 1;
  } else if (v === state.value) state.ties++;
}

/** Whether removing `e` can change what `state` knows: it held the largest value, or a value that is not a number. */
function mayHold(state: Largest, e: Entity): boolean {
  const v = state.locator.get(e);
  return typeof v === 'number' ? v >= state.value : v !== undefined && v !== null;
}
