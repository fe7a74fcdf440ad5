import { ServiceError, type Entity, type Storage } from '@resourcery/core';
import { keyValues, type SelectQuery, type SelectResult, type Stamp, type Target, type WriteBatch } from '@resourcery/core/storage';

/** One stored entity: its row (kept through updates) and the version of its current state. */
interface Slot {
  entity: Entity;
  row: string;
  version: string;
}

/**
 * Entities in a Map keyed by the resource key (e.g. `Sku`), in insertion order: a
 * storage of the v2 contract (docs/storage.md). It declines every push-down (select
 * hands out all entities and says it applied nothing), addresses writes by key, issues
 * stamps (row and version) so that writes are refused when their target changed, and
 * keeps keys unique. Writes are all-or-nothing: the batch is applied to a copy, which
 * replaces the map only when every part succeeded.
 */
export class MapStorage implements Storage {
  private key: readonly string[];
  private slots: Map<string, Slot>;
  /** The stamp of each entity handed out: the stored objects are never changed, only replaced. */
  private readonly stamps = new WeakMap<Entity, Stamp>();
  private clock = 0;

  constructor(key: string | readonly string[], initial: Entity[] = []) {
    this.key = typeof key === 'string' ? [key] : key;
    this.slots = this.apply(new Map(), { insert: initial });
  }

  /** The service declares the resource's key; it must be the one the map is keyed by. */
  declareKey(key: readonly string[]): void {
    if (key.join() !== this.key.join()) throw new Error(`This MapStorage is keyed by ${this.key.join(', ')}, not ${key.join(', ')}`);
  }

  async select(_query: SelectQuery): Promise<SelectResult> {
    const entities = [...this.slots.values()].map((s) => s.entity);
    return { entities, conditionsApplied: false, pagingApplied: false };
  }

  stamp(entity: Entity): Stamp | undefined {
    return this.stamps.get(entity);
  }

  async write(batch: WriteBatch): Promise<void> {
    this.slots = this.apply(this.slots, batch);
  }

  /** The map after the batch; throws, leaving `current` untouched, if any part fails. */
  private apply(current: Map<string, Slot>, batch: WriteBatch): Map<string, Slot> {
    const next = new Map(current);
    for (const target of batch.delete ?? []) next.delete(this.find(current, target).id);
    for (const { target, value } of batch.update ?? []) {
      const { id, slot } = this.find(current, target);
      const moved = this.idOf(value) !== id;
      if (moved) next.delete(id);
      this.store(next, value, slot.row, !moved);
    }
    for (const entity of batch.insert ?? []) this.store(next, entity, String(++this.clock), false);
    return next;
  }

  /** The slot a target addresses (by its key), if it is still at the version the target was read at. */
  private find(map: Map<string, Slot>, target: Target): { id: string; slot: Slot } {
    const id = JSON.stringify(target.key ?? keyValues(target.entity, this.key));
    const slot = map.get(id);
    const current = slot && (target.stamp ? slot.version === target.stamp.version : slot.entity === target.entity);
    if (!current) throw new ServiceError('Conflict', 'The entity was changed by another request; nothing was written');
    return { id, slot };
  }

  /** Stores an entity under its key at a new version; `replace`: the key is its own (an update in place). */
  private store(map: Map<string, Slot>, entity: Entity, row: string, replace: boolean): void {
    const id = this.idOf(entity);
    if (id === undefined)
      throw new ServiceError('InvalidResourceEntity', `${this.key.join(', ')} is required`, { data: { [this.key[0]]: 'is required' } });
    if (!replace && map.has(id)) throw new ServiceError('Conflict', `Another entity already has the key ${id}; nothing was written`);
    const slot = { entity, row, version: String(++this.clock) };
    map.set(id, slot);
    this.stamps.set(entity, { row, version: slot.version });
  }

  /** The key values as the map's key; undefined when one is missing. */
  private idOf(entity: Entity): string | undefined {
    const values = keyValues(entity, this.key);
    return values.some((v) => v === undefined || v === null) ? undefined : JSON.stringify(values);
  }
}
