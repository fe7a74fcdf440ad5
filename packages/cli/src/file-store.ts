import { open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { MemoryStorage, ServiceError, type Entity, type SelectQuery, type SelectResult, type Storage, type WriteBatch } from '@resourcery/core';

/** Admin data kept in the file beside the resources, so a restart keeps it (logs are not kept). */
const PERSISTED_ADMIN = new Set(['service.admin.macro', 'service.admin.webhook', 'service.admin.webhookoutbox']);

/**
 * A JSON file of `{ "<Resource>": [entities...] }` held in memory. A write becomes visible
 * only once it is durable: it is applied to a pending copy, the file is saved with it
 * (temp file + fsync + rename + directory fsync), and only then do readers see it. A
 * failed save changes nothing, in memory or on disk. Writes that arrive while a save
 * runs form the next group and share one save (group commit). Keys starting with
 * `Service.` hold the service's own data (macros, webhooks, pending deliveries).
 */
export class FileStore {
  /** The durable state of each resource; replaced (never mutated) when a save succeeds. */
  readonly resources = new Map<string, MemoryStorage>();
  /** Top-level objects (json-server's singular resources): one entity, saved back as an object. */
  readonly singular = new Set<string>();
  private readonly admin = new Map<string, MemoryStorage>();
  /** How admin keys are spelled in the file. */
  private readonly adminNames = new Map<string, string>();
  /** The group taking writes (not yet saving), and the last group started (saving or done). */
  private open: Group | null = null;
  private last: Promise<void> = Promise.resolve();

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
      } else store.resources.set(name, new MemoryStorage(entities as Entity[]));
    }
    await store.removeLeftovers();
    return store;
  }

  /** The storage of one resource; its writes resolve once saved, and are seen only then. */
  storage(name: string): Storage {
    return this.saving(this.resources, name);
  }

  /** Storage for an admin resource kept in the file; undefined for the ones kept in memory only. */
  adminStorage(name: string): Storage | undefined {
    const key = name.toLowerCase();
    if (!PERSISTED_ADMIN.has(key)) return undefined;
    if (!this.admin.has(key)) this.admin.set(key, new MemoryStorage());
    this.adminNames.set(key, name);
    return this.saving(this.admin, key);
  }

  /** Resolves when no save is running or waiting. */
  async idle(): Promise<void> {
    for (;;) {
      const last = this.last;
      await last.catch(() => undefined);
      if (this.open === null && last === this.last) return;
      if (this.open !== null) await this.open.done.catch(() => undefined);
    }
  }

  private saving(map: Map<string, MemoryStorage>, key: string): Storage {
    return {
      select: (query: SelectQuery): Promise<SelectResult> => map.get(key)!.select(query),
      count: (query) => map.get(key)!.count(query),
      write: (batch: WriteBatch) => this.write(map, key, batch),
    };
  }

  /** Applies a batch to the open group's pending copy, then waits for that group's save. */
  private async write(map: Map<string, MemoryStorage>, key: string, batch: WriteBatch): Promise<void> {
    const group = (this.open ??= this.startGroup());
    await group.ready;
    let pending = group.pending.get(map)?.get(key);
    if (pending === undefined) {
      pending = new MemoryStorage(map.get(key)!.all() as Entity[]);
      if (!group.pending.has(map)) group.pending.set(map, new Map());
      group.pending.get(map)!.set(key, pending);
    }
    try {
      await pending.write(batch);
    } catch (e) {
      // A target another write of this group changed (Conflict): this write fails alone. It
      // fails once that change is visible, so the core's retry selects the changed entity.
      await group.done.catch(() => undefined);
      throw e;
    }
    await group.done;
  }

  /**
   * A group opens behind the previous save; once that save is done, every write waiting
   * applies its batch (in microtasks), and the group's own save starts on the next turn.
   */
  private startGroup(): Group {
    const previous = this.last;
    let resolveDone!: () => void;
    let rejectDone!: (e: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      resolveDone = resolve;
      rejectDone = reject;
    });
    done.catch(() => undefined);
    const group: Group = { ready: previous.catch(() => undefined), pending: new Map(), done };
    this.last = done;
    group.ready
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(async () => {
        if (this.open === group) this.open = null;
        try {
          if (group.pending.size > 0) await this.writeFile(group);
        } catch (e) {
          console.error(`resourcery: saving ${this.file} failed; the change was not applied:`, e);
          rejectDone(new ServiceError('Unknown', 'The change could not be saved to the data file; nothing was changed'));
          return;
        }
        for (const [map, byKey] of group.pending) for (const [key, memory] of byKey) map.set(key, memory);
        resolveDone();
      });
    return group;
  }

  private async writeFile(group: Group): Promise<void> {
    const current = (map: Map<string, MemoryStorage>, key: string) => (group.pending.get(map)?.get(key) ?? map.get(key)!).all();
    const data: Record<string, readonly Entity[] | Entity> = {};
    for (const name of this.resources.keys()) data[name] = this.singular.has(name) ? (current(this.resources, name)[0] ?? {}) : current(this.resources, name);
    for (const key of this.admin.keys()) {
      const entities = current(this.admin, key);
      if (entities.length > 0) data[this.adminNames.get(key) ?? key] = entities;
    }
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      const handle = await open(tmp, 'w');
      try {
        await handle.writeFile(JSON.stringify(data, null, 2) + '\n');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, this.file);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    // The rename is durable once the directory is: a crash right after must not bring back the old file.
    const dir = await open(dirname(this.file), 'r').catch(() => null);
    if (dir) await dir.sync().catch(() => undefined).finally(() => dir.close());
  }

  /** Temp files a crash or a failed save left beside the data file (`<file>.<pid>.tmp`). */
  private async removeLeftovers(): Promise<void> {
    const prefix = `${basename(this.file)}.`;
    const names = await readdir(dirname(this.file)).catch(() => [] as string[]);
    for (const name of names) {
      if (name.startsWith(prefix) && /^\d+\.tmp$/.test(name.slice(prefix.length))) await unlink(join(dirname(this.file), name)).catch(() => undefined);
    }
  }
}

interface Group {
  /** Settles when the previous group's save is done (success or not). */
  ready: Promise<void>;
  /** Pending copies of the storages this group's writes changed, by map and key. */
  pending: Map<Map<string, MemoryStorage>, Map<string, MemoryStorage>>;
  /** Settles when this group's save is done: resolved once its changes are visible. */
  done: Promise<void>;
}
