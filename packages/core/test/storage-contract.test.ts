import { MemoryStorage, ServiceError, type Entity, type Storage } from '@resourcery/core';
import { type SelectResult, type WriteBatch } from '@resourcery/core/storage';
import { storageContract } from './storage-contract';

/**
 * A storage with only the required parts (no stamps, no declareKey, no push-down): the
 * service must still keep keys unique and honour If-Match, within one process.
 */
class PlainStorage implements Storage {
  private entities: Entity[] = [];

  async select(): Promise<SelectResult> {
    return { entities: this.entities, conditionsApplied: false, pagingApplied: false };
  }

  async write(batch: WriteBatch): Promise<void> {
    const next = this.entities.slice();
    const position = (entity: Entity) => {
      const i = next.indexOf(entity);
      if (i < 0) throw new ServiceError('Conflict', 'changed by another request');
      return i;
    };
    for (const { target, value } of batch.update ?? []) next[position(target.entity)] = value;
    for (const target of batch.delete ?? []) next.splice(position(target.entity), 1);
    this.entities = [...next, ...(batch.insert ?? [])];
  }
}

storageContract('MemoryStorage', () => new MemoryStorage());
storageContract('a storage with only select and write', () => new PlainStorage());
