import { ServiceError, type Entity, type SelectQuery, type SelectResult, type Storage, type WriteBatch } from '@resourcery/core';

/**
 * Entities in a Map keyed by one property (e.g. `Sku`), in insertion order. It declines
 * every push-down: select hands out all entities and says it applied nothing, so the
 * service filters, orders and pages them itself. Writes are all-or-nothing: the batch
 * is applied to a copy, which replaces the map only when every part succeeded.
 */
export class MapStorage implements Storage {
  private entities: Map<unknown, Entity>;

  constructor(
    private readonly key: string,
    initial: Entity[] = [],
  ) {
    this.entities = this.apply(new Map(), { insert: initial });
  }

  async select(_query: SelectQuery): Promise<SelectResult> {
    return { entities: this.entities.values(), conditionsApplied: false, pagingApplied: false };
  }

  async write(batch: WriteBatch): Promise<void> {
    this.entities = this.apply(this.entities, batch);
  }

  /** The map after the batch; throws, leaving `current` untouched, if any part fails. */
  private apply(current: Map<unknown, Entity>, batch: WriteBatch): Map<unknown, Entity> {
    const next = new Map(current);
    const stale = [...(batch.delete ?? []), ...(batch.update ?? []).map((u) => u.target)].some((t) => current.get(t[this.key]) !== t);
    // Targets are the objects select handed out; another object means another request changed it.
    if (stale) throw new ServiceError('Conflict', 'The entities were changed by another request; nothing was written');
    for (const target of batch.delete ?? []) next.delete(target[this.key]);
    for (const { target, value } of batch.update ?? []) {
      if (value[this.key] === target[this.key])
        next.set(target[this.key], value); // keeps its position
      else {
        next.delete(target[this.key]);
        this.add(next, value);
      }
    }
    for (const entity of batch.insert ?? []) this.add(next, entity);
    return next;
  }

  private add(map: Map<unknown, Entity>, entity: Entity): void {
    const id = entity[this.key];
    const problem = id === undefined || id === null ? 'is required' : map.has(id) ? `${JSON.stringify(id)} is taken` : null;
    if (problem) throw new ServiceError('InvalidResourceEntity', `${this.key} ${problem}`, { data: { [this.key]: problem } });
    map.set(id, entity);
  }
}
