import { ServiceError } from '../errors.js';
import { MemoryStorage } from './memory.js';
import type { Entity, SelectQuery, SelectResult, Storage } from './storage.js';

/** A read-only storage whose entities are computed on every select (listings). */
export class ComputedStorage implements Storage {
  constructor(private readonly compute: () => Entity[] | Promise<Entity[]>) {}

  async select(query: SelectQuery): Promise<SelectResult> {
    return new MemoryStorage(await this.compute()).select(query);
  }

  write(): Promise<void> {
    return Promise.reject(new ServiceError('MethodNotAllowed', 'This resource is read-only'));
  }
}
