import { open, readFile, rename, unlink } from 'node:fs/promises';
import { MemoryStorage, type Entity, type SelectQuery, type SelectResult, type Storage, type WriteBatch } from '@resourcery/core';

/**
 * A JSON file of `{ "<Resource>": [entities...] }` held in memory. Every write is saved
 * before it is acknowledged, atomically (temp file + fsync + rename); writes that arrive
 * while a save runs share the next save (group commit).
 */
export class FileStore {
  readonly resources = new Map<string, MemoryStorage>();
  private current: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  private constructor(readonly file: string) {}

  static async load(file: string): Promise<FileStore> {
    const text = await readFile(file, 'utf8');
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new Error(`${file} must hold a JSON object whose properties are arrays of entities`);
    const store = new FileStore(file);
    for (const [name, entities] of Object.entries(data)) {
      if (!Array.isArray(entities) || entities.some((e) => e === null || typeof e !== 'object' || Array.isArray(e))) {
        throw new Error(`"${name}" in ${file} must be an array of objects`);
      }
      store.resources.set(name, new MemoryStorage(entities as Entity[]));
    }
    return store;
  }

  /** The storage of one resource; its writes are saved to the file before they resolve. */
  storage(name: string): Storage {
    const memory = this.resources.get(name)!;
    return {
      select: (query: SelectQuery): Promise<SelectResult> => memory.select(query),
      count: (query) => memory.count(query),
      write: async (batch: WriteBatch) => {
        await memory.write(batch);
        await this.save();
      },
    };
  }

  /** Resolves once a save that started after this call has finished. */
  save(): Promise<void> {
    if (this.next === null) {
      const previous = this.current ?? Promise.resolve();
      this.next = previous.catch(() => undefined).then(() => {
        this.next = null;
        this.current = this.writeNow();
        return this.current;
      });
    }
    return this.next;
  }

  private async writeNow(): Promise<void> {
    const data: Record<string, readonly Entity[]> = {};
    for (const [name, memory] of this.resources) data[name] = memory.all();
    const tmp = `${this.file}.${process.pid}.tmp`;
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(JSON.stringify(data, null, 2) + '\n');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(tmp, this.file);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
  }
}
