import type { Entity } from '@resourcery/core';
import type { Literal, Locator, SelectQuery } from '@resourcery/core/storage';
import type { Change } from './journal.js';

/** Entities by the value of one property: `n:7` for the number 7, `s:7` for the string "7". */
type Buckets = Map<string, Entity[]>;

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
 * Exact-value lookups on one resource of the data file, so that a query of one `=`
 * condition (the core's check that a new key is free, `/items/id=7`) does not scan every
 * entity: without it a keyed POST costs the size of the file. Built per property on its
 * first use, then kept up to date from the journaled changes, in the same turn as the
 * entities they describe become visible. Answers only when at most one entity matches (a
 * bucket of several may not be in storage order); the caller scans otherwise.
 */
export class EqualityIndex {
  /** Property name in lower case (locators match case-insensitively) -> buckets. */
  private readonly byProperty = new Map<string, Buckets>();
  /** Locator text -> the largest number there (how the core finds the next key to generate). */
  private readonly largest = new Map<string, Largest>();

  /** `entities`: the resource's current entities, read when a property is first looked up. */
  constructor(private readonly entities: () => readonly Entity[]) {}

  /** The entities matching the query, or undefined when the index cannot tell (the caller scans). */
  lookup(query: SelectQuery): Entity[] | undefined {
    const predicate = query.predicate;
    if (query.conditions.length !== 1 || predicate === null) return undefined;
    const { locator, op, value } = query.conditions[0];
    if (op !== '=' || locator.isDotted) return undefined;
    const tokens = tokensOf(value);
    if (tokens === undefined) return undefined;
    const buckets = this.buckets(locator.text.toLowerCase());
    const hits: Entity[] = [];
    for (const token of tokens)
      for (const e of buckets.get(token) ?? []) {
        // The bucket holds candidates; the condition itself decides, exactly as a scan would.
        if (!hits.includes(e) && predicate(e)) hits.push(e);
        if (hits.length > 1) return undefined;
      }
    return hits;
  }

  /**
   * The first entity in descending order of one property, and nothing else (no conditions):
   * the core's query for the largest key before it generates the next. Answered while every
   * value there is a number or missing and one entity holds the largest; undefined otherwise.
   */
  top(query: SelectQuery): Entity[] | undefined {
    const order = query.order;
    if (query.conditions.length !== 0 || order === null || !order.descending || query.offset !== 0 || query.limit !== 1) return undefined;
    let state = this.largest.get(order.locator.text);
    if (state === undefined) {
      state = { locator: order.locator, top: undefined, value: -Infinity, ties: 0, other: false };
      for (const e of this.entities()) consider(state, e);
      this.largest.set(order.locator.text, state);
    }
    return state.other || state.ties !== 1 ? undefined : [state.top!];
  }

  /** Builds the buckets of a property now rather than at its first lookup. */
  prepare(property: string): void {
    this.buckets(property.toLowerCase());
  }

  /** Follows a change just made visible. */
  apply(change: Change): void {
    this.followLargest(change);
    if (this.byProperty.size === 0) return;
    if (change.s) {
      this.byProperty.clear();
      return;
    }
    for (const [, before, after] of change.u ?? []) {
      this.remove(before);
      this.add(after);
    }
    for (const [, before] of change.d ?? []) this.remove(before);
    for (const e of change.a ?? []) this.add(e);
  }

  /** Appended entities only raise a largest value; one that may have held it, removed, means counting again. */
  private followLargest(change: Change): void {
    if (this.largest.size === 0) return;
    const removed = change.s ? undefined : [...(change.u ?? []), ...(change.d ?? [])].map(([, before]) => before);
    for (const [text, state] of this.largest) {
      if (removed === undefined || removed.some((e) => mayHold(state, e))) {
        this.largest.delete(text);
        continue;
      }
      for (const [, , after] of change.u ?? []) consider(state, after);
      for (const e of change.a ?? []) consider(state, e);
    }
  }

  private buckets(property: string): Buckets {
    let buckets = this.byProperty.get(property);
    if (buckets === undefined) {
      buckets = new Map();
      this.byProperty.set(property, buckets);
      for (const e of this.entities()) this.addTo(property, buckets, e);
    }
    return buckets;
  }

  private add(e: Entity): void {
    for (const [property, buckets] of this.byProperty) this.addTo(property, buckets, e);
  }

  private addTo(property: string, buckets: Buckets, e: Entity): void {
    for (const token of tokensAt(e, property)) {
      const bucket = buckets.get(token);
      if (bucket === undefined) buckets.set(token, [e]);
      else if (!bucket.includes(e)) bucket.push(e);
    }
  }

  private remove(e: Entity): void {
    for (const [property, buckets] of this.byProperty) {
      for (const token of tokensAt(e, property)) {
        const bucket = buckets.get(token);
        const i = bucket?.indexOf(e) ?? -1;
        if (i < 0) continue;
        if (bucket!.length === 1) buckets.delete(token);
        else bucket!.splice(i, 1);
      }
    }
  }
}

/** The tokens of the values `e` holds at `property` (lower case; any spelling of the name matches). */
function tokensAt(e: Entity, property: string): string[] {
  const tokens: string[] = [];
  for (const key in e) {
    if (key.length !== property.length || key.toLowerCase() !== property) continue;
    const token = tokenOf(e[key]);
    if (token !== undefined) tokens.push(token);
  }
  return tokens;
}

function tokenOf(value: unknown): string | undefined {
  if (typeof value === 'number') return `n:${value}`;
  if (typeof value === 'string') return `s:${value}`;
  return undefined;
}

/**
 * The values a `=` literal matches, as tokens (conditions.ts): a quoted string the same
 * string; a number the same number, or a string spelled as written; plain text a string
 * spelled so. Booleans and dates compare in other ways: undefined (not answered here).
 */
function tokensOf(literal: Literal): string[] | undefined {
  if (literal.kind === 'string') return [`s:${literal.value}`];
  if (literal.kind !== 'raw') return undefined;
  if (literal.number !== undefined) return [`n:${literal.number}`, `s:${literal.text}`];
  if (literal.boolean !== undefined || literal.date !== undefined) return undefined;
  return [`s:${literal.text}`];
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
