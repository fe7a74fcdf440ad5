import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Entity } from '@resourcery/core';
import { fileStamp, type FileStamp } from './data-file.js';
import { syncDir, type JournalFile } from './journal.js';
import { writeDataFile } from './serialize.js';

/** When the journal is written into the data file (besides at stop): docs/cli-durability.md#compaction-the-journal-written-into-the-file. */
export interface CompactionPolicy {
  /** Once the journal holds this many bytes, or a quarter of the data file's size when that is more. */
  bytes: number;
  /**
   * Once no write came for this long after a quiet period; by default 20 ms, plus 20 ms per
   * MB of data file (at most 1 s). Doubled (up to 1 s, or this when longer) each time writes
   * resume soon after a compaction it started (within 4 times the wait, at most 1 s): a
   * stream of writes with gaps is not compacted between its groups.
   */
  idleMs?: number;
  /**
   * At least this often while writes keep coming: the oldest write not in the file is
   * compacted once it is this old; by default 1 ms per KiB of data file, at least 1 s.
   */
  lagMs?: number;
  /** At most this long, whatever the lag (at least once a minute by default). */
  maxAgeMs: number;
}

export const DEFAULT_POLICY: CompactionPolicy = { bytes: 1 << 20, maxAgeMs: 60_000 };

/** The data file and the journal as the store last loaded or wrote them. */
export interface OnDisk {
  /** The file's stamp: a different stamp means an outside edit. */
  known: FileStamp | null;
  /** SHA-1 of the file's content. */
  fileHash: string;
  journal: JournalFile | null;
  /** Number of the last group of writes journaled. */
  seq: number;
}

/** What compaction needs of the store. */
export interface CompactionHost {
  readonly file: string;
  readonly disk: OnDisk;
  /** Runs a task in the write queue: after every group and task before it. */
  inQueue<T>(task: () => Promise<T>): Promise<T>;
  /** The durable data as the file holds it, copied. */
  snapshot(): Record<string, readonly Entity[] | Entity>;
  /** The file's stamp when it was edited outside the store since it was last loaded (while watched), else null. */
  editedOutside(): Promise<FileStamp | null>;
  /** The file now holds every write up to `seq`. */
  compacted?(seq: number): void;
  /** Whether a group of writes is taking writes or being appended: no compaction starts for lack of writes then. */
  writing?(): boolean;
}

/** setTimeout's longest wait. */
const LONGEST_TIMER = 2 ** 31 - 1;

/**
 * Writes the journaled writes into the data file (temp file + fsync + rename) and drops
 * the journal lines the file then holds: in the background once the journal is big or old
 * enough or writes pause, and on demand (at start after a crash, at stop).
 */
export class Compaction {
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** When the oldest write not yet in the file was journaled. */
  private oldestJournaled: number | null = null;
  private stopped = false;
  /** The idle wait is the policy's times this: doubled while writes resume right after idle compactions. */
  private backoff = 1;
  /** When the last compaction started for lack of writes, until the next write is journaled. */
  private idleStartedAt: number | null = null;
  /** Times the data file was written (background, on demand, at stop, a merge). */
  private written = 0;

  constructor(
    private readonly store: CompactionHost,
    private readonly policy: CompactionPolicy,
  ) {}

  /** A group of writes was journaled (or a leftover journal adopted): the file lacks writes from now on. */
  journaled(): void {
    const now = Date.now();
    this.oldestJournaled ??= now;
    if (this.idleStartedAt !== null) {
      // Writes came back soon after a compaction started for lack of them (within 4 times the
      // wait, at most its cap): a stream with gaps (a loaded machine), so wait twice as long
      // before the next; after a longer quiet, as soon as before.
      const wait = this.idleWait();
      this.backoff = now - this.idleStartedAt <= Math.min(4 * wait, this.longestIdle()) ? Math.min(this.backoff * 2, 1 << 20) : 1;
      this.idleStartedAt = null;
    }
  }

  /**
   * Writes the data into the file now and drops the journal lines it holds. Writes go on
   * meanwhile: the data is taken between two groups, serialized in slices outside the
   * queue, and only the final rename and journal rewrite wait in it (a few ms).
   */
  run(): Promise<void> {
    const previous = this.running ?? Promise.resolve();
    const run = previous.then(() => this.once());
    const tracked: Promise<void> = run
      .catch(() => undefined)
      .then(() => {
        if (this.running === tracked) this.running = null;
      });
    this.running = tracked;
    return run;
  }

  /**
   * Writes the data into the file now, from the write queue (a checkpoint first, as `once`
   * does); false, writing nothing, when the file was edited again meanwhile.
   */
  async writeNow(): Promise<boolean> {
    const { store } = this;
    const disk = store.disk;
    // Not `once`'s temp name: a background compaction may be writing that one now.
    const tmp = `${store.file}.merge.${process.pid}.tmp`;
    const hash = await writeDataFile(tmp, store.snapshot());
    if (await store.editedOutside()) {
      await unlink(tmp);
      return false;
    }
    if (disk.journal !== null) await disk.journal.append({ seq: disk.seq, file: hash });
    // The temp file's stamp (a rename keeps inode, size and mtime): an edit landing right
    // after the rename then differs from it and is loaded, rather than taken for ours.
    const stamp = await fileStamp(tmp);
    await rename(tmp, store.file);
    await syncDir(dirname(store.file));
    disk.known = stamp;
    disk.fileHash = hash;
    this.written++;
    return true;
  }

  /**
   * Compacts in the background now if the journal is due (its size, or the age of the oldest
   * write the file lacks), else once writes pause, and at the latest when that write is due.
   */
  schedule(): void {
    const journal = this.store.disk.journal;
    if (this.stopped || journal === null || journal.writes === 0) return;
    clearTimeout(this.timer);
    const size = this.size();
    const threshold = Math.max(this.policy.bytes, size / 4);
    const age = Date.now() - (this.oldestJournaled ?? Date.now());
    const due = journal.size >= threshold || age >= this.lag();
    if (due && this.running === null) this.inBackground(false);
    else {
      const wait = Math.min(this.idleWait(), Math.max(0, this.lag() - age));
      this.timer = setTimeout(() => this.whenQuiet(), Math.min(LONGEST_TIMER, wait));
      this.timer.unref();
    }
  }

  /** No more background compactions (the store stops; `run` still works). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** How many times the data file was written so far (the tests count them). */
  get compactions(): number {
    return this.written;
  }

  private size(): number {
    return this.store.disk.known?.size ?? 0;
  }

  /** How long the file may lag the oldest write it lacks while writes keep coming. */
  private lag(): number {
    return Math.min(this.policy.maxAgeMs, this.policy.lagMs ?? Math.max(1000, this.size() / 1024));
  }

  /** How long without a write before compacting: soon for a small file (users look at it), later for a large one (a compaction costs its size), longer while writes resume right after. */
  private idleWait(): number {
    return Math.min(this.baseIdle() * this.backoff, this.longestIdle());
  }

  /** The idle wait after a quiet period. */
  private baseIdle(): number {
    return this.policy.idleMs ?? Math.min(1000, 20 + this.size() / 50_000);
  }

  /** How long the idle wait grows to: 1 s, or the policy's when longer. */
  private longestIdle(): number {
    return Math.max(this.baseIdle(), 1000);
  }

  /** The idle timer: compacts unless a group of writes is open or being appended (its append schedules again). */
  private whenQuiet(): void {
    const journal = this.store.disk.journal;
    const due = journal !== null && Date.now() - (this.oldestJournaled ?? Date.now()) >= this.lag();
    if (!due && this.store.writing?.()) {
      // Not quiet: a group is taking writes or waiting for its fsync. Its append calls
      // schedule again; this timer only covers an append that fails.
      this.timer = setTimeout(() => this.whenQuiet(), Math.min(LONGEST_TIMER, this.idleWait()));
      this.timer.unref();
      return;
    }
    this.inBackground(!due);
  }

  private inBackground(idle: boolean): void {
    if (this.stopped || this.running !== null) return;
    if (idle) this.idleStartedAt = Date.now();
    this.run().catch((e) => {
      // The journal keeps every write; the next compaction tries again.
      console.error(`resourcery: writing the journal into ${this.store.file} failed; it is kept:`, e);
    });
  }

  private async once(): Promise<void> {
    const { store } = this;
    const disk = store.disk;
    const cut = await store.inQueue(async () => {
      if (disk.journal !== null && disk.journal.writes === 0) {
        // Only its first checkpoint (a crash right after creating it): nothing to keep.
        await disk.journal.remove();
        disk.journal = null;
      }
      if (disk.journal === null) return null;
      return { data: store.snapshot(), seq: disk.seq, offset: disk.journal.size, writes: disk.journal.writes, known: disk.known };
    });
    if (cut === null) return;
    const tmp = `${store.file}.${process.pid}.tmp`;
    let hash: string;
    try {
      hash = await writeDataFile(tmp, cut.data);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    await store.inQueue(async () => {
      const journal = disk.journal!;
      let stamp: FileStamp | null;
      try {
        // An edit loaded since the cut, or not loaded yet: the file is not ours to replace now.
        if (disk.known !== cut.known || (await store.editedOutside())) {
          await unlink(tmp);
          return;
        }
        // Before the rename, so a crash right after it knows the file holds these writes.
        await journal.append({ seq: cut.seq, file: hash });
        // Taken before the rename, as writeNow does: an edit landing just after it is not taken for ours.
        stamp = await fileStamp(tmp);
        await rename(tmp, store.file);
      } catch (e) {
        await unlink(tmp).catch(() => undefined);
        throw e;
      }
      await syncDir(dirname(store.file));
      disk.known = stamp;
      disk.fileHash = hash;
      this.written++;
      store.compacted?.(cut.seq);
      if (journal.writes === cut.writes) {
        disk.journal = null;
        this.oldestJournaled = null;
        await journal.remove();
      } else {
        this.oldestJournaled = Date.now();
        await journal.dropBefore(cut.offset, journal.writes - cut.writes, { seq: cut.seq, file: hash });
      }
    });
    this.schedule();
  }
}
