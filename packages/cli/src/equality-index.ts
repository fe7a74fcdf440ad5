import type { Entity } from '@resourcery/core';
import type { Literal, SelectQuery } from '@resourcery/core/storage';
import type { Change } from './journal.js';

/** Entities by the value of one property: `n:7` for the number 7, `s:7` for the string "7". */
type Buckets = Map<string, Entity[]>;

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

  /** Builds the buckets of a property now rather than at its first lookup. */
  prepare(property: string): void {
    this.buckets(property.toLowerCase());
  }

  /** Follows a change just made visible. */
  apply(change: Change): void {
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
    for (const key in e) {
      if (key.length !== property.length || key.toLowerCase() !== property) continue;
      const token = tokenOf(e[key]);
      if (token === undefined) continue;
      const bucket = buckets.get(token);
      if (bucket === undefined) buckets.set(token, [e]);
      else if (!bucket.includes(e)) bucket.push(e);
    }
  }

  private remove(e: Entity): void {
    for (const [property, buckets] of this.byProperty) {
      for (const key in e) {
        if (key.length !== property.length || key.toLowerCase() !== property) continue;
        const token = tokenOf(e[key]);
        const bucket = token === undefined ? undefined : buckets.get(token);
        const i = bucket?.indexOf(e) ?? -1;
        if (i < 0) continue;
        if (bucket!.length === 1) buckets.delete(token!);
        else bucket!.splice(i, 1);
      }
    }
  }
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
