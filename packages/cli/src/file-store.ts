import { open, readFile, rename, unlink } from 'node:fs/promises';
import { MemoryStorage, type Entity, type SelectQuery, type SelectResult, type Storage, type WriteBatch } from '@resourcery/core';

/** Admin data kept in the file beside the resources, so a restart keeps it (logs are not kept). */
const PERSISTED_ADMIN = new Set(['service.admin.macro', 'service.admin.webhook', 'service.admin.webhookoutbox']);

/**
 * A JSON file of `{ "<Resource>": [entities...] }` held in memory. Every write is saved
 * before it is acknowledged, atomically (temp file + fsync + rename); writes that arrive
 * while a save runs share the next save (group commit). Keys starting with `Service.`
 * hold the service's own data (macros, webhooks, pending deliveries), not resources.
 */
export class FileStore {
  readonly resources = new Map<string, MemoryStorage>();
  /** Top-level objects (json-server's singular resources): one entity, saved back as an object. */
  readonly singular = new Set<string>();
  private readonly admin = new Map<string, MemoryStorage>();
  /** How admin keys are spelled in the file. */
  private readonly adminNames = new Map<string, string>();
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
    for (const [name, value] of Object.entries(data)) {
      const single = value !== null && typeof value === 'object' && !Array.isArray(value) && !name.toLowerCase().startsWith('service.');
      if (single) store.singular.add(name);
      const entities: unknown = single ? [value] : value;
      if (!Array.isArray(entities) || entities.some((e) => e === null || typeof e !== 'object' || Array.isArray(e))) {
        throw new Error(`"${name}" in ${file} must be an array of objects (a resource) or an object (a one-entity resource)`);
      }
      if (name.toLowerCase().startsWith('service.')) {
        store.admin.set(name.toLowerCase(), new MemoryStorage(entities as Entity[]));
        store.adminNames.set(name.toLowerCase(), name);
      }
      else store.resources.set(name, new MemoryStorage(entities as Entity[]));
    }
    return store;
  }

  /** The storage of one resource; its writes are saved to the file before they resolve. */
  storage(name: string): Storage {
    return this.saving(this.resources.get(name)!);
  }

  /** Storage for an admin resource kept in the file; undefined for the ones kept in memory only. */
  adminStorage(name: string): Storage | undefined {
    const key = name.toLowerCase();
    if (!PERSISTED_ADMIN.has(key)) return undefined;
    let memory = this.admin.get(key);
    if (!memory) this.admin.set(key, (memory = new MemoryStorage()));
    return this.saving(memory, name);
  }

  /** Resolves when no save is running or waiting. */
  async idle(): Promise<void> {
    for (;;) {
      const pending = this.next ?? this.current;
      if (pending === null) return;
      await pending.catch(() => undefined);
      if (this.next === null && pending === this.current) return;
    }
  }

  private saving(memory: MemoryStorage, adminName?: string): Storage {
    if (adminName !== undefined) this.adminNames.set(adminName.toLowerCase(), adminName);
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
    const data: Record<string, readonly Entity[] | Entity> = {};
    for (const [name, memory] of this.resources) data[name] = this.singular.has(name) ? (memory.all()[0] ?? {}) : memory.all();
    for (const [key, memory] of this.admin) if (memory.all().length > 0) data[this.adminNames.get(key) ?? key] = memory.all();
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
