import { rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Entity } from '@resourcery/core';
import { fileStamp, type FileStamp } from './data-file.js';
import { syncDir, type JournalFile } from './journal.js';
import { writeDataFile } from './serialize.js';

/** When the journal is written into the data file (besides at stop). */
export interface CompactionPolicy {
  /** Once the journal holds this many bytes, or a quarter of the data file's size when that is more. */
  bytes: number;
  /** Once no write came for this long; by default 20 ms, plus 20 ms per MB of data file (at most 1 s). */
  idleMs?: number;
  /** At least this often while writes keep coming. */
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
}

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

  constructor(
    private readonly store: CompactionHost,
    private readonly policy: CompactionPolicy,
  ) {}

  /** A group of writes was journaled (or a leftover journal adopted): the file lacks writes from now on. */
  journaled(): void {
    this.oldestJournaled ??= Date.now();
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
    return true;
  }

  /** Compacts in the background now if the journal is due, else once writes pause. */
  schedule(): void {
    const journal = this.store.disk.journal;
    if (this.stopped || journal === null || journal.writes === 0) return;
    clearTimeout(this.timer);
    const size = this.store.disk.known?.size ?? 0;
    const threshold = Math.max(this.policy.bytes, size / 4);
    const due = journal.size >= threshold || Date.now() - (this.oldestJournaled ?? Date.now()) >= this.policy.maxAgeMs;
    if (due && this.running === null) this.inBackground();
    else {
      // Soon for a small file (users look at it), later for a large one (a compaction costs its size).
      const idle = this.policy.idleMs ?? Math.min(1000, 20 + size / 50_000);
      this.timer = setTimeout(() => this.inBackground(), idle);
      this.timer.unref();
    }
  }

  /** No more background compactions (the store stops; `run` still works). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private inBackground(): void {
    if (this.stopped || this.running !== null) return;
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
