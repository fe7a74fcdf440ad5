import { readFile, rename } from 'node:fs/promises';
import { basename } from 'node:path';
import { MemoryStorage, ServiceError, type Entity, type Storage } from '@resourcery/core';
import { EqualityIndex, type IndexedChange } from '@resourcery/core/storage';
import { type SelectQuery, type SelectResult, type WriteBatch } from '@resourcery/core/storage';
import { Compaction, DEFAULT_POLICY, type CompactionPolicy, type OnDisk } from './compaction.js';
import { fileStamp, hashOf, isAdminKey, readDataFile, removeLeftovers, type FileStamp, type ParsedData } from './data-file.js';
import { EditHistory, mergeEdit } from './edit-base.js';
import { editedSince, FileWatch, parseEdit } from './file-watch.js';
import { checkFree, ResourceKeys } from './keys.js';
import { changeOf, JournalFile, journalPath, lengthAfter, readJournal, replayJournal, type Change } from './journal.js';

/** Admin data kept in the file beside the resources, so a restart keeps it (logs are not kept). */
const PERSISTED_ADMIN = new Set(['service.admin.macro', 'service.admin.webhook', 'service.admin.webhookoutbox']);

export interface FileStoreOptions {
  compaction?: Partial<CompactionPolicy>;
  /** False to read only (import): a leftover journal is replayed in memory, no file is changed. */
  writable?: boolean;
}

/**
 * A JSON file of `{ "<Resource>": [entities...] }` held in memory. A write becomes visible
 * only once it is durable: it is applied to a pending copy, its change is appended to the
 * journal beside the file and fsynced, and only then do readers see it. A failed append
 * changes nothing, in memory or on disk. Writes that arrive meanwhile form the next group
 * and share one append (group commit). Compaction (compaction.ts) writes the data into
 * the file in the background (temp file + fsync + rename) and at stop; a start replays a
 * leftover journal; with `watch`, outside edits (file-watch.ts) are reloaded.
 * Keys starting with `Service.` hold the service's own data (macros, webhooks, deliveries).
 */
export class FileStore {
  /** The durable state of each resource: appended to, or replaced by a changed copy, once a group is journaled. */
  readonly resources = new Map<string, MemoryStorage>();
  /** Top-level objects (json-server's singular resources): one entity, saved back as an object. */
  readonly singular = new Set<string>();
  private readonly admin = new Map<string, MemoryStorage>();
  /** How admin keys are spelled in the file. */
  private readonly adminNames = new Map<string, string>();
  /** Exact-value lookups per resource, following its durable entities. */
  private readonly indexes = new Map<string, EqualityIndex>();
  /** The resources' keys, checked as writes apply, and the numbers generated. */
  private readonly keys = new ResourceKeys((name, query) => this.select(this.resources, name, query));
  /** The group taking writes (not yet saving), and the last task queued (group or compaction step). */
  private open: Group | null = null;
  private last: Promise<void> = Promise.resolve();
  /** Groups started and not settled yet (taking writes, waiting their turn, or appending). */
  private appending = 0;
  /** The data file and journal as last loaded or written, shared with compaction. */
  private readonly disk: OnDisk = { known: null, fileHash: '', journal: null, seq: 0 };
  private readonly compaction: Compaction;
  /** Outside edits, while `watch` is on. */
  private readonly fileWatch: FileWatch;
  private onAdded: (name: string) => void = () => undefined;
  /** Set when a journaled change could not be applied in memory: memory no longer matches the journal (halt). */
  private halted: ServiceError | null = null;
  private onHalt: () => void = () => undefined;
  /** While watching: the file's versions since the last load, to find what an outside edit was based on. */
  private history: EditHistory | null = null;

  private constructor(
    readonly file: string,
    policy: CompactionPolicy,
  ) {
    this.fileWatch = new FileWatch(file);
    const host = {
      file,
      disk: this.disk,
      inQueue: this.inQueue.bind(this),
      snapshot: () => this.snapshot(),
      editedOutside: () => this.editedOutside(),
      compacted: (seq: number) => this.history?.compacted(seq),
      writing: () => this.open !== null || this.appending > 0,
    };
    this.compaction = new Compaction(host, policy);
  }

  /**
   * Loads the file and replays the journal a crash left beside it (a torn last line is
   * ignored: it was never acknowledged), then writes the result into the file.
   */
  static async load(file: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const store = new FileStore(file, { ...DEFAULT_POLICY, ...options.compaction });
    // Read in pieces: no buffer or text of the whole file is alive while the entities are built (data-file.ts).
    const { parsed, hash } = await readDataFile(file);
    const disk = store.disk;
    disk.fileHash = hash;
    const content = await readJournal(journalPath(file));
    if (content) replayJournal(parsed.entries, content, disk.fileHash, file, 'start');
    store.install(parsed, () => undefined);
    disk.known = await fileStamp(file);
    if (options.writable === false) return store;
    await removeLeftovers(file);
    if (content) {
      // A loop, not Math.max(...): a journal may hold more lines than a call takes arguments.
      for (const line of content.lines) disk.seq = Math.max(disk.seq, line.seq);
      disk.journal = await JournalFile.adopt(journalPath(file), content);
      store.compaction.journaled();
      await store.compact().catch((e) => {
        // The journal stays valid: it is replayed again at the next start.
        console.error(`resourcery: could not write the journal into ${file} yet; it is kept:`, e);
      });
    }
    return store;
  }

  /**
   * Reloads the file when it is edited outside the server. A reload runs in the write
   * queue, so it never interleaves with an append or a compaction; writes not yet in the
   * file are applied on top of the edit; a file that does not parse is logged and the data
   * kept; a group of writes checks the file first, so it never goes on from data the edit
   * replaced (its writes fail with Conflict, and the core retries them on the new data).
   * `added` hears of top-level keys the edit added (new resources).
   */
  watch(added: (name: string) => void = () => undefined): void {
    if (this.fileWatch.active) return;
    this.onAdded = added;
    this.history = new EditHistory(this.entries(), this.disk.seq, (name) => this.keys.of(name));
    this.fileWatch.start(() => {
      this.open ??= this.startGroup();
    });
  }

  /** Stops watching the file. */
  unwatch(): void {
    this.fileWatch.stop();
  }

  /** The storage of one resource; its writes resolve once journaled, and are seen only then. */
  storage(name: string): Storage {
    return this.saving(this.resources, name);
  }

  /** Storage for an admin resource kept in the file; undefined for the ones kept in memory only. */
  adminStorage(name: string): Storage | undefined {
    const key = name.toLowerCase();
    if (!PERSISTED_ADMIN.has(key)) return undefined;
    if (!this.admin.has(key)) this.admin.set(key, new MemoryStorage([], UNINDEXED));
    this.adminNames.set(key, name);
    return this.saving(this.admin, key);
  }

  /** Resolves when no write, reload or compaction step is running or waiting. */
  async idle(): Promise<void> {
    for (;;) {
      const last = this.last;
      await last.catch(() => undefined);
      if (this.open === null && last === this.last) return;
      if (this.open !== null) await this.open.done.catch(() => undefined);
    }
  }

  /**
   * Writes the data into the file now and drops the journal lines it holds. Writes go on
   * meanwhile: the data is taken between two groups, serialized in slices outside the
   * queue, and only the final rename and journal rewrite wait in it (a few ms).
   */
  compact(): Promise<void> {
    return this.compaction.run();
  }

  /** How many times the data file was written since the start (compactions and merges; docs/cli-durability.md). */
  get compactions(): number {
    return this.compaction.compactions;
  }

  /** Stops: waits for pending writes, writes the journal into the file and removes it. */
  async close(): Promise<void> {
    this.compaction.stop();
    this.unwatch();
    await this.idle();
    try {
      await this.compact();
    } catch (e) {
      console.error(`resourcery: writing the journal into ${this.file} failed at stop; it is kept and replayed at the next start:`, e);
    }
    await this.disk.journal?.close();
  }

  private saving(map: Map<string, MemoryStorage>, key: string): Storage {
    const storage: Storage = {
      // Answers at once, as the memory storage does: a GET then waits for nothing.
      select: (query: SelectQuery) => this.select(map, key, query),
      count: (query) => map.get(key)!.count(query),
      // Stamps are shared by every MemoryStorage, so the durable copy's are the pending copy's too.
      stamp: (entity) => map.get(key)!.stamp(entity),
      write: (batch: WriteBatch) => this.write(map, key, batch),
    };
    if (map !== this.resources) return storage;
    // A resource's key is checked here, as a group applies its writes (one write at a time),
    // and generated numbers are reserved here: so the core lets keyed POSTs run side by side,
    // and those that arrive together share one journal append and fsync (keys.ts).
    return {
      ...storage,
      declareKey: (names: readonly string[]) => this.keys.declare(key, names),
      nextKeys: (count: number, atLeast: number, onlyIfNumbers: boolean) =>
        this.keys.next(key, count, atLeast, onlyIfNumbers, this.pendingInserts(key)),
    };
  }

  /** The durable entities of a query: through the equality index when it can answer. */
  private select(map: Map<string, MemoryStorage>, key: string, query: SelectQuery): SelectResult | Promise<SelectResult> {
    const index = map === this.resources ? this.index(key) : undefined;
    const hits = index?.lookup(query);
    // Order, offset and limit of at most one entity: left to the service.
    if (hits !== undefined) return { entities: hits, conditionsApplied: true, pagingApplied: false };
    const top = index?.top(query);
    if (top !== undefined) return { entities: top, conditionsApplied: true, pagingApplied: true };
    return map.get(key)!.select(query);
  }

  /** The inserts of a resource in the open group, not yet durable (a generated number must pass them too). */
  private pendingInserts(name: string): readonly Entity[] {
    const pending = this.open?.pending.get(this.resources)?.get(name);
    return Array.isArray(pending) ? pending : [];
  }

  /**
   * Applies a batch to the open group's pending state (recording its change), then waits
   * for that group's append. Inserts alone are only listed: they are appended to the
   * durable entities once journaled, so a POST costs no copy of the resource. An update or
   * a delete works on a copy (the resource's entities plus the group's inserts so far).
   */
  private async write(map: Map<string, MemoryStorage>, key: string, batch: WriteBatch): Promise<void> {
    if (this.halted) throw this.halted;
    const group = (this.open ??= this.startGroup());
    await group.ready;
    if (!group.pending.has(map)) group.pending.set(map, new Map());
    const byKey = group.pending.get(map)!;
    const fileKey = map === this.admin ? (this.adminNames.get(key) ?? key) : key;
    // One write at a time per group, so each change is recorded against the entities it was applied to, in order.
    const applied = group.applying.then(async () => {
      let pending = byKey.get(key);
      const declared = map === this.resources ? this.keys.of(key) : null;
      if (Object.keys(batch).every((k) => k === 'insert') && (pending === undefined || Array.isArray(pending))) {
        const inserts = batch.insert ?? [];
        if (inserts.length === 0) return;
        if (declared !== null) checkFree(declared, inserts, pending ?? [], this.resources.get(key)!.all(), this.index(key));
        byKey.set(key, [...(pending ?? []), ...inserts]);
        group.changes.push({ r: fileKey, a: inserts });
        return;
      }
      if (pending === undefined || Array.isArray(pending)) {
        const copy = new MemoryStorage(map.get(key)!.all() as Entity[], UNINDEXED);
        if (pending !== undefined) await copy.write({ insert: pending });
        // From now on the copy refuses a taken key itself (inserts, and updates that move a key).
        if (declared !== null) copy.declareKey(declared);
        byKey.set(key, (pending = copy));
      }
      const storage = pending;
      const count = storage.all().length;
      const change = changeOf(fileKey, storage.all(), batch);
      await storage.write(batch);
      const exact = change !== null && lengthAfter(change, count) === storage.all().length;
      // A form the journal cannot say: record the whole key (correct, only bigger).
      group.changes.push(exact ? change : { r: fileKey, s: storage.all().slice() });
    });
    group.applying = applied.catch(() => undefined);
    try {
      await applied;
    } catch (e) {
      // A target another write of this group changed (Conflict): this write fails alone. It
      // fails once that change is visible, so the core's retry selects the changed entity.
      await group.done.catch(() => undefined);
      throw e;
    }
    await group.done;
  }

  /**
   * A group opens behind the previous task; once that is done, every write waiting
   * applies its batch (in microtasks), and the group's own append starts on the next turn.
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
    this.appending++;
    const settled = () => {
      this.appending--;
      this.keys.groupDone();
    };
    void done.then(settled, settled);
    const group: Group = { ready: previous.catch(() => undefined), pending: new Map(), changes: [], applying: Promise.resolve(), done };
    this.last = done;
    group.ready
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(async () => {
        if (this.open === group) this.open = null;
        await group.applying;
        const changes = group.changes;
        try {
          const edited = this.fileWatch.active ? await this.editedOutside() : null;
          if (edited) {
            // Stamp taken before the read: an edit landing after it is seen by the next check.
            await this.reload(await readFile(this.file), edited);
            if (group.pending.size > 0)
              throw new ServiceError('Conflict', 'The data file was edited outside the server; nothing was written');
          } else if (changes.length > 0) await this.append(changes);
        } catch (e) {
          if (ServiceError.is(e)) {
            rejectDone(e);
            return;
          }
          console.error(`resourcery: saving to ${this.file} failed; the change was not applied:`, e);
          rejectDone(new ServiceError('Unknown', 'The change could not be saved to the data file; nothing was changed'));
          return;
        }
        try {
          const appended: Array<Promise<void>> = [];
          for (const [map, byKey] of group.pending)
            for (const [key, pending] of byKey) {
              // Appended in place (in this turn: MemoryStorage appends synchronously); a copy replaces the entities.
              if (Array.isArray(pending)) appended.push(map.get(key)!.write({ insert: pending }));
              else map.set(key, pending);
            }
          for (const change of changes) if (this.resources.has(change.r)) this.indexes.get(change.r)?.apply(indexedChange(change));
          await Promise.all(appended);
        } catch (e) {
          rejectDone(this.halt(e));
          return;
        }
        resolveDone();
      })
      // Whatever fails, the group settles: its writers and every task queued behind it wait for `done`.
      .catch((e: unknown) => rejectDone(this.halt(e)));
    return group;
  }

  /**
   * A change is in the journal but could not be applied in memory: memory and journal
   * disagree, so nothing more is written or compacted from memory. The writes are answered
   * 500 saying so, then `halting` hears of it (the CLI stops); the next start replays the
   * journal (docs/cli-durability.md).
   */
  private halt(cause: unknown): ServiceError {
    console.error(`resourcery: a change journaled in ${this.file}.journal could not be applied in memory; the server stops:`, cause);
    this.halted = new ServiceError(
      'Unknown',
      'The change was saved in the journal but could not be applied; the server stops, and its next start applies the journal. Nothing more is written until then',
    );
    this.compaction.stop();
    queueMicrotask(() => this.onHalt());
    return this.halted;
  }

  /** Called once if the store halts (halt): the CLI answers what is in flight, then stops. */
  halting(listener: () => void): void {
    this.onHalt = listener;
  }

  /** Appends a group of changes to the journal (creating it from the file's checkpoint) and fsyncs it. */
  private async append(changes: Change[]): Promise<void> {
    const disk = this.disk;
    disk.journal ??= await JournalFile.create(journalPath(this.file), { seq: disk.seq, file: disk.fileHash });
    const line = { seq: disk.seq + 1, w: changes };
    await disk.journal.append(line);
    if (!(await disk.journal.linked())) {
      // Appended to a file no start will read: not durable, so not acknowledged (docs/cli-durability.md).
      const gone = disk.journal;
      disk.journal = null;
      await gone.close();
      throw gone.removed();
    }
    disk.seq++;
    this.history?.journaled(line);
    this.compaction.journaled();
    this.compaction.schedule();
  }

  /** A task in the write queue: runs after every group and task before it. */
  private inQueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.last.catch(() => undefined).then(task);
    this.last = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** The durable data as the file holds it, copied: inserts append to the arrays in place. */
  private snapshot(): Record<string, readonly Entity[] | Entity> {
    // Halted: memory lacks journaled changes, so the file is left to the replay at the next start.
    if (this.halted) throw this.halted;
    const data: Record<string, readonly Entity[] | Entity> = {};
    for (const [name, memory] of this.resources) data[name] = this.singular.has(name) ? (memory.all()[0] ?? {}) : memory.all().slice();
    for (const [key, memory] of this.admin) {
      const entities = memory.all();
      if (entities.length > 0) data[this.adminNames.get(key) ?? key] = entities.slice();
    }
    return data;
  }

  /** While watching: the file's stamp when something other than this store changed it since, else null. */
  private editedOutside(): Promise<FileStamp | null> {
    return this.fileWatch.active ? editedSince(this.file, this.disk.known) : Promise.resolve(null);
  }

  /** Whether every entity of a resource holds its own number or string at `property` (any spelling): builds that property's index. */
  uniqueIn(name: string, property: string): boolean {
    return this.resources.has(name) && this.index(name).unique(property, this.resources.get(name)!.all().length);
  }

  /** Builds the index of one property now (the key: the core checks new keys with it). */
  prepareIndex(name: string, property: string): void {
    if (this.resources.has(name)) this.index(name).prepare(property);
  }

  private index(name: string): EqualityIndex {
    let index = this.indexes.get(name);
    if (index === undefined) this.indexes.set(name, (index = new EqualityIndex(() => this.resources.get(name)!.all())));
    return index;
  }

  /** Sets the data from a parsed file; `added` hears of keys that are new. */
  private install(parsed: ParsedData, added: (name: string) => void): void {
    this.indexes.clear();
    for (const name of this.resources.keys()) if (!parsed.entries.has(name)) this.resources.set(name, new MemoryStorage([], UNINDEXED));
    for (const key of this.admin.keys())
      if (![...parsed.entries.keys()].some((n) => n.toLowerCase() === key)) this.admin.set(key, new MemoryStorage([], UNINDEXED));
    for (const [name, entities] of parsed.entries) {
      if (isAdminKey(name)) {
        this.admin.set(name.toLowerCase(), new MemoryStorage(entities, UNINDEXED));
        this.adminNames.set(name.toLowerCase(), name);
        continue;
      }
      const isNew = !this.resources.has(name);
      this.resources.set(name, new MemoryStorage(entities, UNINDEXED));
      if (parsed.singular.has(name)) this.singular.add(name);
      if (isNew) added(name);
    }
  }

  /** Replaces the data with the edited file's plus the journaled writes it lacks, or keeps it (and says why) when the file does not parse. */
  private async reload(buffer: Buffer, stamp: FileStamp): Promise<void> {
    const parsed = parseEdit(this.file, buffer);
    const disk = this.disk;
    disk.fileHash = hashOf(buffer);
    disk.known = stamp;
    if (this.history !== null) return this.merge(parsed);
    const content = disk.journal === null ? null : await readJournal(disk.journal.path);
    if (content) replayJournal(parsed.entries, content, disk.fileHash, this.file, 'reload');
    this.install(parsed, this.onAdded);
    console.error(
      `resourcery: reloaded ${basename(this.file)} after an outside edit${disk.journal?.writes ? '; the journaled writes it lacks are applied on top' : ''}`,
    );
    // The file should show the merged data soon.
    if (disk.journal?.writes) this.compaction.schedule();
  }

  /**
   * With the file's versions known (watching): the edit is merged as a change against the
   * version it was based on, which may predate compactions (edit-base.ts); an edit older than
   * every version kept is set aside as `<file>.rejected-<time>`, never loaded.
   */
  private async merge(parsed: ParsedData): Promise<void> {
    const history = this.history!;
    const merged = mergeEdit(history, parsed, basename(this.file));
    if (merged === null) {
      const aside = `${this.file}.rejected-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      await rename(this.file, aside);
      console.error(
        `resourcery: the edit of ${basename(this.file)} is kept as ${basename(aside)} and NOT loaded; the file is written again from the data served`,
      );
      history.reset(this.entries(), this.disk.seq, []);
      await this.compaction.writeNow();
      return;
    }
    this.install(parsed, this.onAdded);
    // The file holds the edit; the writes after its base are still to apply on top of it.
    history.reset(merged.edit, merged.seq, merged.lines);
    if (merged.latest && merged.skipped === 0) {
      // The journal holds exactly those writes: a crash replays them on top of the edit.
      if (this.disk.journal?.writes) this.compaction.schedule();
      return;
    }
    // Some are in no journal any more (compacted into a version the edit replaced), or the
    // journal would append again entities the edit holds by key: into the file now.
    if (await this.compaction.writeNow()) history.compacted(this.disk.seq);
  }

  /** The data as the file's entries (a one-entity resource as a list of one). */
  private entries(): Map<string, Entity[]> {
    const data = this.snapshot();
    const entries = new Map<string, Entity[]>();
    for (const [k, v] of Object.entries(data)) entries.set(k, Array.isArray(v) ? (v as Entity[]).slice() : [v as Entity]);
    return entries;
  }
}

interface Group {
  /** Settles when the previous task is done (success or not). */
  ready: Promise<void>;
  /** What this group's writes change, by map and key: entities to append, or a changed copy. */
  pending: Map<Map<string, MemoryStorage>, Map<string, Entity[] | MemoryStorage>>;
  /** The changes of the group's writes, in the order applied. */
  changes: Change[];
  /** Settles when the writes that joined so far are applied to the pending copies. */
  applying: Promise<void>;
  /** Settles when this group's append is done: resolved once its changes are visible. */
  done: Promise<void>;
}

/** The file store keeps one equality index per resource across the copies its writes make (indexes above), so its MemoryStorages keep none. */
const UNINDEXED = { index: false };

function indexedChange(change: Change): IndexedChange {
  return {
    replaced: change.s !== undefined,
    updated: change.u?.map(([, before, after]) => [before, after] as const),
    deleted: change.d?.map(([, before]) => before),
    inserted: change.a,
  };
}
