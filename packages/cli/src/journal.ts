import { open, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ServiceError, type Entity } from '@resourcery/core';
import type { WriteBatch } from '@resourcery/core/storage';

/**
 * The journal beside the data file (`<file>.journal`): one line per group of acknowledged
 * writes, appended and fsynced before the writes are acknowledged, so a write costs the
 * size of the change rather than the size of the file. Compaction writes the data into
 * the file and drops the lines it holds. docs/cli-durability.md describes the format.
 */

/** One write's change to one top-level key of the data file. Positions count in the entities before the write. */
export interface Change {
  /** The key, as spelled in the data file. */
  r: string;
  /** Entities appended. */
  a?: Entity[];
  /** Entities replaced: [position, entity before, entity after]. */
  u?: Array<[number, Entity, Entity]>;
  /** Entities removed: [position, entity before]. */
  d?: Array<[number, Entity]>;
  /** Every entity of the key (a write the forms above cannot say). */
  s?: Entity[];
}

/** A group of writes, numbered. */
export interface WriteLine {
  seq: number;
  w: Change[];
}

/** "The data file whose SHA-1 is `file` holds every write numbered up to `seq`." The first line of every journal is one. */
export interface Checkpoint {
  seq: number;
  file: string;
}

export type JournalLine = WriteLine | Checkpoint;

export function journalPath(file: string): string {
  return `${file}.journal`;
}

export interface JournalContent {
  lines: JournalLine[];
  /** Bytes up to the end of the last complete line. */
  validBytes: number;
  /** Bytes after it: a line a crash cut off (never acknowledged). */
  tornBytes: number;
}

/**
 * Reads a journal; null when there is none. A last line that is incomplete or does not
 * parse was being written when the process died: it is left out. A bad line followed by
 * good ones is damage, not a crash: that throws, so nothing is replayed or overwritten.
 */
export async function readJournal(path: string): Promise<JournalContent | null> {
  let buffer: Buffer;
  try {
    buffer = await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const lines: JournalLine[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const end = buffer.indexOf(10, offset);
    const line = end < 0 ? null : parseLine(buffer.toString('utf8', offset, end));
    if (line === null) {
      const rest = end < 0 ? '' : buffer.toString('utf8', end + 1).trim();
      if (rest !== '')
        throw new Error(
          `${path} is damaged at byte ${offset} (a line that does not parse, followed by more lines); nothing was changed: move it aside to start without it`,
        );
      break;
    }
    lines.push(line);
    offset = end + 1;
  }
  return { lines, validBytes: offset, tornBytes: buffer.length - offset };
}

function parseLine(text: string): JournalLine | null {
  try {
    const line = JSON.parse(text) as Partial<WriteLine & Checkpoint> | null;
    if (line === null || typeof line !== 'object' || typeof line.seq !== 'number') return null;
    if (Array.isArray(line.w) || typeof line.file === 'string') return line as JournalLine;
    return null;
  } catch {
    return null;
  }
}

function isCheckpoint(line: JournalLine): line is Checkpoint {
  return 'file' in line;
}

/**
 * The groups of writes the data file (whose hash is given) does not hold yet: those after
 * the last checkpoint naming this file; when none names it, the file was changed by hand
 * since the journal began, and the writes since the journal's first checkpoint apply on
 * top of the edit (`edited`).
 */
function writesToReplay(lines: readonly JournalLine[], fileHash: string): { writes: WriteLine[]; edited: boolean } {
  const checkpoints = lines.filter(isCheckpoint);
  if (checkpoints.length === 0) return { writes: [], edited: false };
  const match = checkpoints.filter((c) => c.file === fileHash).pop();
  const from = (match ?? checkpoints[0]).seq;
  return { writes: lines.filter((l): l is WriteLine => !isCheckpoint(l) && l.seq > from), edited: match === undefined };
}

/**
 * Applies a change to the entries of a data file; returns how many of its updates and
 * deletes found no entity to change (an edit by hand changed or removed it: the edit wins).
 * An entity is found at its recorded position when it is still there unchanged, else by content.
 */
export function applyChange(entries: Map<string, Entity[]>, change: Change): number {
  if (change.s) {
    entries.set(change.r, change.s.slice());
    return 0;
  }
  const before = entries.get(change.r) ?? [];
  let after = before;
  let missed = 0;
  if (change.u?.length || change.d?.length) {
    // Position -> the entity replacing it, or null when removed.
    const claimed = new Map<number, Entity | null>();
    const find = (position: number, old: Entity): number => {
      if (position < before.length && !claimed.has(position) && sameValue(before[position], old)) return position;
      return before.findIndex((e, i) => !claimed.has(i) && sameValue(e, old));
    };
    for (const [position, old, value] of change.u ?? []) {
      const i = find(position, old);
      if (i < 0) missed++;
      else claimed.set(i, value);
    }
    for (const [position, old] of change.d ?? []) {
      const i = find(position, old);
      if (i < 0) missed++;
      else claimed.set(i, null);
    }
    after = [];
    for (let i = 0; i < before.length; i++) {
      const value = claimed.has(i) ? claimed.get(i)! : before[i];
      if (value !== null) after.push(value);
    }
  }
  for (const e of change.a ?? []) after.push(e);
  entries.set(change.r, after);
  return missed;
}

/**
 * The change a batch makes to `before` (the entities it is applied to), or null when the
 * journal must record the whole key instead (a batch form it does not know). Null too when
 * a target is missing: the storage then refuses the batch, and nothing is recorded.
 */
export function changeOf(key: string, before: readonly Entity[], batch: WriteBatch): Change | null {
  if (Object.keys(batch).some((k) => k !== 'insert' && k !== 'update' && k !== 'delete')) return null;
  const change: Change = { r: key };
  const updates = batch.update ?? [];
  const deletes = batch.delete ?? [];
  if (updates.length > 0 || deletes.length > 0) {
    const targets = new Set<Entity>([...updates.map((u) => u.target.entity), ...deletes.map((t) => t.entity)]);
    const position = new Map<Entity, number>();
    for (let i = 0; i < before.length && position.size < targets.size; i++) if (targets.has(before[i])) position.set(before[i], i);
    if (position.size < targets.size) return null;
    if (updates.length > 0) change.u = updates.map((u) => [position.get(u.target.entity)!, u.target.entity, u.value]);
    if (deletes.length > 0) change.d = deletes.map((t) => [position.get(t.entity)!, t.entity]);
  }
  if (batch.insert?.length) change.a = batch.insert;
  return change;
}

/** How many entities a key holds after the change, given how many it held before. */
export function lengthAfter(change: Change, before: number): number {
  return change.s ? change.s.length : before - (change.d?.length ?? 0) + (change.a?.length ?? 0);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Applies to the parsed file the journal's writes it does not hold, and says on stderr
 * what it did (at start: replayed groups, a torn last line; always: writes an edit beat).
 */
export function replayJournal(
  entries: Map<string, Entity[]>,
  content: JournalContent,
  fileHash: string,
  file: string,
  when: 'start' | 'reload',
): void {
  const name = basename(file);
  const { writes, edited } = writesToReplay(content.lines, fileHash);
  let missed = 0;
  for (const line of writes) for (const change of line.w) missed += applyChange(entries, change);
  if (when === 'start' && content.tornBytes > 0)
    console.error(`resourcery: ${name}.journal ends with an incomplete record (cut off by a crash, never acknowledged): ignored`);
  if (when === 'start' && writes.length > 0)
    console.error(
      `resourcery: ${name}.journal: ${writes.length} group(s) of writes not yet in ${name} replayed${edited ? ` on top of ${name}, which was edited since` : ''}`,
    );
  if (missed > 0)
    console.error(`resourcery: ${missed} journaled update(s) or delete(s) target entities the edit of ${name} changed: the edit wins`);
}

/** Fsyncs a directory, so a rename or a new file in it survives a crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => null);
  if (handle)
    await handle
      .sync()
      .catch(() => undefined)
      .finally(() => handle.close());
}

/** The open journal: appends lines, each fsynced; a failed append is cut off before the next one. */
export class JournalFile {
  /** Write lines in the file (checkpoints not counted). */
  writes: number;
  /** True after a failed append: the file may hold part of a line past `size`. */
  private dirty = false;

  private constructor(
    readonly path: string,
    private handle: FileHandle,
    /** Bytes of complete, fsynced lines. */
    public size: number,
    writes: number,
  ) {
    this.writes = writes;
  }

  /** A new journal whose first line is the checkpoint of the data file it starts from. */
  static async create(path: string, checkpoint: Checkpoint): Promise<JournalFile> {
    const handle = await open(path, 'w+');
    const journal = new JournalFile(path, handle, 0, 0);
    try {
      await journal.append(checkpoint);
      await syncDir(dirname(path));
    } catch (e) {
      await handle.close().catch(() => undefined);
      throw e;
    }
    return journal;
  }

  /** The journal a previous run left, without its torn last line. */
  static async adopt(path: string, content: JournalContent): Promise<JournalFile> {
    const handle = await open(path, 'r+');
    const journal = new JournalFile(path, handle, content.validBytes, content.lines.filter((l) => !isCheckpoint(l)).length);
    journal.dirty = content.tornBytes > 0;
    return journal;
  }

  async append(line: JournalLine): Promise<void> {
    const bytes = Buffer.from(`${JSON.stringify(line)}\n`);
    if (this.dirty) {
      await this.handle.truncate(this.size);
      this.dirty = false;
    }
    try {
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await this.handle.write(bytes, written, bytes.length - written, this.size + written);
        written += bytesWritten;
      }
      await this.handle.datasync();
    } catch (e) {
      // The part written must not count: cut it now, or before the next append.
      this.dirty = true;
      await this.handle
        .truncate(this.size)
        .then(() => {
          this.dirty = false;
        })
        .catch(() => undefined);
      throw e;
    }
    this.size += bytes.length;
    if (!isCheckpoint(line)) this.writes++;
  }

  /**
   * Keeps only the lines from byte `offset` on (`writes` of them are write lines), behind
   * a new first checkpoint: a new file renamed over this one, so a crash leaves either.
   */
  async dropBefore(offset: number, writes: number, checkpoint: Checkpoint): Promise<void> {
    const rest = Buffer.alloc(this.size - offset);
    if (rest.length > 0) await this.handle.read(rest, 0, rest.length, offset);
    const head = Buffer.from(`${JSON.stringify(checkpoint)}\n`);
    const tmp = `${dirname(this.path)}/${basename(this.path)}.${process.pid}.tmp`;
    const next = await open(tmp, 'w+');
    try {
      await next.writeFile(Buffer.concat([head, rest]));
      await next.sync();
    } catch (e) {
      await next.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    await rename(tmp, this.path).catch(async (e) => {
      await next.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw e;
    });
    await syncDir(dirname(this.path));
    await this.handle.close().catch(() => undefined);
    this.handle = next;
    this.size = head.length + rest.length;
    this.writes = writes;
    this.dirty = false;
  }

  /**
   * Whether the open file is still the one at `path`: deleting the data directory (or
   * moving the journal) leaves appends going to a file nobody will read again.
   */
  async linked(): Promise<boolean> {
    const [own, named] = await Promise.all([this.handle.stat(), stat(this.path).catch(() => null)]);
    return own.nlink > 0 && named !== null && named.ino === own.ino && named.dev === own.dev;
  }

  /** The error a write appended after the journal was removed answers with (the path is logged, not answered). */
  removed(): ServiceError {
    console.error(
      `resourcery: ${this.path} was removed while the server ran (its directory deleted, or the file moved); the write was refused`,
    );
    return new ServiceError(
      'Unknown',
      "The data file's journal was removed while the server ran (was its directory deleted?); nothing was changed",
    );
  }

  /** Deletes the journal (every write it held is in the data file). */
  async remove(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await unlink(this.path);
    await syncDir(dirname(this.path));
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}
