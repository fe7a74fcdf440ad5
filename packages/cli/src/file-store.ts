import { watch as watchDir, type FSWatcher } from 'node:fs';
import { open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  MemoryStorage,
  ServiceError,
  type Entity,
  type SelectQuery,
  type SelectResult,
  type Storage,
  type WriteBatch,
} from '@resourcery/core';
import { writeJsonInSlices } from './serialize.js';

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
  /** The file as last loaded or saved by this store: a different stamp means an outside edit. */
  private known: FileStamp | null = null;
  private watcher: FSWatcher | undefined;
  private onAdded: (name: string) => void = () => undefined;

  private constructor(readonly file: string) {}

  static async load(file: string): Promise<FileStore> {
    const store = new FileStore(file);
    const parsed = parseData(file, await readFile(file, 'utf8'));
    for (const name of parsed.singular) store.singular.add(name);
    for (const [name, memory] of parsed.resources) store.resources.set(name, memory);
    for (const [key, memory] of parsed.admin) store.admin.set(key, memory);
    for (const [key, name] of parsed.adminNames) store.adminNames.set(key, name);
    store.known = await fileStamp(file);
    await store.removeLeftovers();
    return store;
  }

  /**
   * Reloads the file when it is edited outside the server. A reload runs in the save
   * queue, so it never interleaves with a save; a file that does not parse is logged and
   * the data kept; a save checks the file first, so it never overwrites an edit it has
   * not loaded (its writes fail with Conflict, and the core retries them on the new data).
   * `added` hears of top-level keys the edit added (new resources).
   */
  watch(added: (name: string) => void = () => undefined): void {
    if (this.watcher) return;
    this.onAdded = added;
    let timer: NodeJS.Timeout | undefined;
    const base = basename(this.file);
    this.watcher = watchDir(dirname(this.file), (_event, name) => {
      if (name !== null && name !== base) return;
      // Editors write in bursts (truncate, write, rename): settle first.
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.open ??= this.startGroup();
      }, WATCH_SETTLE_MS);
    });
    this.watcher.on('error', (e) => console.error(`resourcery: watching ${this.file} stopped:`, e));
  }

  /** Stops watching the file. */
  unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
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
          const edited = this.watcher ? await this.editedOutside() : null;
          if (edited) {
            // Stamp taken before the read: an edit landing after it is seen by the next check.
            this.reload(await readFile(this.file, 'utf8'));
            this.known = edited;
            if (group.pending.size > 0)
              throw new ServiceError('Conflict', 'The data file was edited outside the server; nothing was written');
          } else if (group.pending.size > 0) await this.writeFile(group);
        } catch (e) {
          if (ServiceError.is(e)) {
            rejectDone(e);
            return;
          }
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
    for (const name of this.resources.keys())
      data[name] = this.singular.has(name) ? (current(this.resources, name)[0] ?? {}) : current(this.resources, name);
    for (const key of this.admin.keys()) {
      const entities = current(this.admin, key);
      if (entities.length > 0) data[this.adminNames.get(key) ?? key] = entities;
    }
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      const handle = await open(tmp, 'w');
      try {
        // writeFile on a handle writes all of the text from the current position (write() may write part of it).
        await writeJsonInSlices(data, (text) => handle.writeFile(text));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, this.file);
      this.known = await fileStamp(this.file);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    // The rename is durable once the directory is: a crash right after must not bring back the old file.
    const dir = await open(dirname(this.file), 'r').catch(() => null);
    if (dir)
      await dir
        .sync()
        .catch(() => undefined)
        .finally(() => dir.close());
  }

  /** The file's stamp when something other than this store changed it since, else null. */
  private async editedOutside(): Promise<FileStamp | null> {
    const now = await fileStamp(this.file);
    // A deleted file is not an edit to keep: the next save writes it again.
    const same =
      this.known !== null &&
      now !== null &&
      now.ino === this.known.ino &&
      now.size === this.known.size &&
      now.mtimeMs === this.known.mtimeMs;
    return now === null || same ? null : now;
  }

  /** Replaces the data with the edited file's, or keeps it (and says why) when the file does not parse. */
  private reload(text: string): void {
    let parsed: ParsedData;
    try {
      parsed = parseData(this.file, text);
    } catch (e) {
      // Half-written or mistyped: keep serving the old data, and refuse saves until it parses.
      console.error(
        `resourcery: ${basename(this.file)} was edited but does not load; keeping the data served so far:`,
        (e as Error).message,
      );
      throw new ServiceError(
        'Conflict',
        `The data file was edited outside the server and is not valid yet; nothing was written (${(e as Error).message.replace(this.file, basename(this.file))})`,
      );
    }
    for (const name of this.resources.keys()) if (!parsed.resources.has(name)) this.resources.set(name, new MemoryStorage());
    for (const [name, memory] of parsed.resources) {
      const isNew = !this.resources.has(name);
      this.resources.set(name, memory);
      if (parsed.singular.has(name)) this.singular.add(name);
      if (isNew) this.onAdded(name);
    }
    for (const key of this.admin.keys()) if (!parsed.admin.has(key)) this.admin.set(key, new MemoryStorage());
    for (const [key, memory] of parsed.admin) this.admin.set(key, memory);
    for (const [key, name] of parsed.adminNames) this.adminNames.set(key, name);
    console.error(`resourcery: reloaded ${basename(this.file)} after an outside edit`);
  }

  /** Temp files a crash or a failed save left beside the data file (`<file>.<pid>.tmp`). */
  private async removeLeftovers(): Promise<void> {
    const prefix = `${basename(this.file)}.`;
    const names = await readdir(dirname(this.file)).catch(() => [] as string[]);
    for (const name of names) {
      if (name.startsWith(prefix) && /^\d+\.tmp$/.test(name.slice(prefix.length)))
        await unlink(join(dirname(this.file), name)).catch(() => undefined);
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

/** How long the file must be quiet after an outside change before it is reloaded. */
const WATCH_SETTLE_MS = 100;

interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

async function fileStamp(file: string): Promise<FileStamp | null> {
  const s = await stat(file).catch(() => null);
  return s && { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
}

interface ParsedData {
  resources: Map<string, MemoryStorage>;
  singular: Set<string>;
  admin: Map<string, MemoryStorage>;
  adminNames: Map<string, string>;
}

/** The data file's text as storages; throws a message naming the file when it is not a data file. */
function parseData(file: string, text: string): ParsedData {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new Error(`${file} must hold a JSON object whose properties are arrays of entities`);
  const parsed: ParsedData = { resources: new Map(), singular: new Set(), admin: new Map(), adminNames: new Map() };
  for (const [name, value] of Object.entries(data)) {
    const single = value !== null && typeof value === 'object' && !Array.isArray(value) && !name.toLowerCase().startsWith('service.');
    if (single) parsed.singular.add(name);
    const entities: unknown = single ? [value] : value;
    if (!Array.isArray(entities) || entities.some((e) => e === null || typeof e !== 'object' || Array.isArray(e))) {
      throw new Error(`"${name}" in ${file} must be an array of objects (a resource) or an object (a one-entity resource)`);
    }
    if (name.toLowerCase().startsWith('service.')) {
      parsed.admin.set(name.toLowerCase(), new MemoryStorage(entities as Entity[]));
      parsed.adminNames.set(name.toLowerCase(), name);
    } else parsed.resources.set(name, new MemoryStorage(entities as Entity[]));
  }
  return parsed;
}
