import { ServiceError } from '../errors.js';
import { evaluate, type CompiledQuery } from '../query/evaluate.js';
import type { Entity, SelectQuery, SelectResult, Storage, WriteBatch } from './storage.js';

/**
 * Entities in an array, in insertion order; updates keep positions. Accepts every
 * push-down. Entities handed out are the stored objects: treat them as read-only
 * (writes go through `write`, which replaces objects instead of mutating them).
 */
export class MemoryStorage implements Storage {
  private entities: Entity[];

  constructor(initial: Entity[] = []) {
    this.entities = initial.slice();
  }

  async select(query: SelectQuery): Promise<SelectResult> {
    if (query.predicate === null && query.order === null && query.offset === 0 && query.limit < 0) {
      return { entities: this.entities, conditionsApplied: true, pagingApplied: true };
    }
    const compiled: CompiledQuery = {
      conditions: query.conditions,
      predicate: query.predicate,
      search: null,
      project: null,
      sourceOrder: query.order?.locator ?? null,
      // Written out rather than spread from NO_META: this runs on every select.
      meta: {
        unsafe: false,
        limit: query.limit,
        offset: query.offset,
        order: query.order,
        select: null,
        add: null,
        rename: null,
        distinct: false,
        search: null,
        searchRegex: null,
        safepost: null,
      },
    };
    return { entities: evaluate(this.entities, compiled), conditionsApplied: true, pagingApplied: true };
  }

  async count(query: Pick<SelectQuery, 'predicate'>): Promise<number> {
    const p = query.predicate;
    if (p === null) return this.entities.length;
    let n = 0;
    for (const e of this.entities) if (p(e)) n++;
    return n;
  }

  async write(batch: WriteBatch): Promise<void> {
    const updates = new Map<Entity, Entity>();
    for (const u of batch.update ?? []) updates.set(u.target, u.value);
    const deletes = new Set(batch.delete ?? []);
    if (updates.size === 0 && deletes.size === 0) {
      if (batch.insert?.length) this.entities.push(...batch.insert);
      return;
    }
    let found = 0;
    const next: Entity[] = [];
    for (const e of this.entities) {
      if (deletes.has(e)) {
        found++;
        continue;
      }
      const replacement = updates.get(e);
      if (replacement !== undefined) {
        found++;
        next.push(replacement);
      } else next.push(e);
    }
    if (found !== updates.size + deletes.size) {
      throw new ServiceError('Conflict', 'The entities to change were changed by another request; nothing was written');
    }
    if (batch.insert?.length) next.push(...batch.insert);
    this.entities = next;
  }

  /** A snapshot of every entity in storage order. */
  all(): readonly Entity[] {
    return this.entities;
  }
}
