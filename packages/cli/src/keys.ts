import type { Entity } from '@resourcery/core';
import {
  keyIdentity,
  keyTaken,
  keyValues,
  Locator,
  type EqualityIndex,
  type SelectQuery,
  type SelectResult,
} from '@resourcery/core/storage';

/**
 * The keys of the file store's resources, kept by the store rather than by the core
 * (Storage.declareKey and nextKeys, docs/storage.md): a group of writes checks each
 * insert's key as it applies it (one write at a time, against the durable entities and
 * the group's earlier inserts), and the numbers POST generates are held here until their
 * inserts are stored, so concurrent POSTs do not get one number. The core then runs keyed POSTs side by side instead of one after the
 * other, so those that arrive together share one journal append and one fsync
 * (docs/cli-durability.md).
 */
export class ResourceKeys {
  private readonly declared = new Map<string, readonly string[]>();
  /**
   * Per resource: numbers handed out, and the number of groups done when each was. A
   * number is held until two groups are done: by then its insert, applied to the open
   * group or to the next, is stored (or its write failed), and the number after the
   * largest stored is handed out again as before (docs/keys.md). A write slower than that
   * to reach the store (a slow hook) may find its number taken: Conflict, and the core
   * runs it again with another.
   */
  private readonly held = new Map<string, Map<number, number>>();
  private groups = 0;

  constructor(private readonly select: (name: string, query: SelectQuery) => SelectResult | Promise<SelectResult>) {}

  declare(name: string, key: readonly string[]): void {
    this.declared.set(name, key);
  }

  /** The resource's key, or null. */
  of(name: string): readonly string[] | null {
    return this.declared.get(name) ?? null;
  }

  /**
   * `count` numbers for generated keys: past the largest whole number stored (durable, or
   * inserted by the open group), at least `atLeast`, and past every number held; null with `onlyIfNumbers` when a stored key is not a whole number (the core
   * then generates UUIDs, as it does without this).
   */
  async next(name: string, count: number, atLeast: number, onlyIfNumbers: boolean, pending: readonly Entity[]): Promise<number | null> {
    const property = this.declared.get(name)![0];
    const largest = await this.largest(name, property);
    if (largest === null && onlyIfNumbers) return null;
    let next = Math.max(atLeast, (largest ?? 0) + 1);
    const locator = new Locator(property);
    for (const e of pending) {
      const v = locator.get(e);
      if (typeof v === 'number' && Number.isInteger(v)) next = Math.max(next, v + 1);
    }
    let held = this.held.get(name);
    if (held === undefined) this.held.set(name, (held = new Map<number, number>()));
    for (const [n, at] of held)
      if (this.groups - at >= 2) held.delete(n);
      else next = Math.max(next, n + 1);
    for (let i = 0; i < count; i++) held.set(next + i, this.groups);
    return next;
  }

  /** A group of writes is done (durable, or failed). */
  groupDone(): void {
    this.groups++;
  }

  /** The largest whole-number key stored (0 when none), or null when a stored key is something else (the core's largestKeys). */
  private async largest(name: string, property: string): Promise<number | null> {
    const locator = new Locator(property);
    const top = await this.select(name, { conditions: [], predicate: null, order: { locator, descending: true }, offset: 0, limit: 1 });
    // Descending order puts strings and objects before numbers: a whole number on top is the largest key.
    let candidates = top.entities as Iterable<Entity>;
    if (top.pagingApplied)
      for (const e of candidates) {
        const v = locator.get(e);
        if (typeof v === 'number' && Number.isInteger(v)) return v;
        candidates = (await this.select(name, { conditions: [], predicate: null, order: null, offset: 0, limit: -1 }))
          .entities as Iterable<Entity>;
        break;
      }
    let largest = 0;
    for (const e of candidates) {
      const v = locator.get(e);
      if (typeof v === 'number' && Number.isInteger(v)) largest = Math.max(largest, v);
      else if (v !== undefined && v !== null) return null;
    }
    return largest;
  }
}

/**
 * Conflict when an insert's key is held by a durable entity, by an earlier insert of the
 * group (`pending`) or by another insert of the batch. Keys compare as MemoryStorage's do
 * (value and type: 7 is not "7"); the index finds the durable holders of a number or a
 * string, other values are compared with every entity.
 */
export function checkFree(
  key: readonly string[],
  inserts: readonly Entity[],
  pending: readonly Entity[],
  durable: readonly Entity[],
  index: EqualityIndex,
): void {
  const wanted = new Map<unknown, Entity>();
  for (const e of inserts) {
    const id = keyIdentity(e, key);
    if (id === undefined) continue;
    if (wanted.has(id)) throw keyTaken(key, e);
    wanted.set(id, e);
  }
  if (wanted.size === 0) return;
  for (const e of pending) if (wanted.has(keyIdentity(e, key))) throw keyTaken(key, e);
  for (const [id, e] of wanted) {
    const holders = index.holding(key[0], keyValues(e, key)[0]) ?? durable;
    for (const h of holders) if (keyIdentity(h, key) === id) throw keyTaken(key, h);
  }
}
