import type { Entity } from '@resourcery/core';
import type { ParsedData } from './data-file.js';
import { applyChange, type WriteLine } from './journal.js';

/** Versions of the data file kept to find what an outside edit was based on; older ones are folded into the base. */
const MAX_VERSIONS = 64;

/** What an outside edit was based on, and the journaled writes it lacks. */
export interface EditBase {
  /** The number of the last write that version holds. */
  seq: number;
  /** The writes after the version the edit was based on, in order: they apply on top of it. */
  lines: WriteLine[];
  /** Whether that version is the newest the file held (the journal then holds exactly these writes). */
  latest: boolean;
  /** True when the edit may predate every version kept: it cannot be merged safely. */
  unknown: boolean;
}

/**
 * The versions of the data file the server wrote (each compaction's), with the writes
 * between them, while `--watch` is on. An editor may save a copy it opened before some
 * compactions: its base is then an older version, and the writes compacted since are in
 * no journal. The base is the newest version, unless an older one differs from the edit at
 * most half as much (an edit changes a few entities; a stale copy also lacks every write
 * since); the writes after the base are applied on top (docs/cli-durability.md).
 */
export class EditHistory {
  private base: Map<string, Entity[]>;
  private baseSeq: number;
  private lines: WriteLine[] = [];
  private versions: number[] = [];
  /** Versions were folded into the base: an edit older than the base cannot be told apart. */
  private folded = false;

  constructor(entries: ReadonlyMap<string, readonly Entity[]>, seq: number) {
    this.base = copyOf(entries);
    this.baseSeq = seq;
  }

  /** A group of writes was journaled. */
  journaled(line: WriteLine): void {
    this.lines.push(line);
  }

  /** A compaction wrote the data up to `seq` into the file. */
  compacted(seq: number): void {
    if (this.versions[this.versions.length - 1] === seq || seq === this.baseSeq) return;
    this.versions.push(seq);
    if (this.versions.length > MAX_VERSIONS) {
      const oldest = this.versions.shift()!;
      for (const line of this.lines) if (line.seq <= oldest) for (const change of line.w) applyChange(this.base, change);
      this.lines = this.lines.filter((l) => l.seq > oldest);
      this.baseSeq = oldest;
      this.folded = true;
    }
  }

  /** The version the edit (parsed) was based on, and the writes it lacks. */
  baseOf(edit: ReadonlyMap<string, readonly Entity[]>): EditBase {
    const seqs = [this.baseSeq, ...this.versions];
    const text = new WeakMap<Entity, string>();
    const at = copyOf(this.base);
    const diffs = [{ seq: this.baseSeq, diff: difference(at, edit, text) }];
    let next = 0;
    for (const seq of this.versions) {
      for (; next < this.lines.length && this.lines[next].seq <= seq; next++)
        for (const change of this.lines[next].w) applyChange(at, change);
      diffs.push({ seq, diff: difference(at, edit, text) });
    }
    // The newest version unless an older one explains the edit at most half as many changes:
    // a copy opened before some writes differs from the newest by those writes as well.
    const newest = diffs[diffs.length - 1];
    let best = newest;
    for (const d of diffs) if (d.diff < best.diff) best = d;
    if (best !== newest && best.diff * 2 > newest.diff) best = newest;
    return {
      seq: best.seq,
      lines: this.lines.filter((l) => l.seq > best.seq),
      latest: best.seq === seqs[seqs.length - 1],
      unknown: this.folded && best.seq === this.baseSeq && best.diff > 0,
    };
  }

  /** After a reload: the file holds `entries`, and `lines` (journaled, numbered up to `seq`) are still to apply on top of it. */
  reset(entries: ReadonlyMap<string, readonly Entity[]>, seq: number, lines: WriteLine[]): void {
    this.base = copyOf(entries);
    this.baseSeq = seq;
    this.lines = lines;
    this.versions = [];
    this.folded = false;
  }
}

/**
 * Applies to an edit (parsed, changed in place) the writes it lacks, against the version it
 * was based on, and says so on stderr; null (said loudly) when the edit may be older than
 * every version kept. `edit` is the edit as written, for the history's next base.
 */
export function mergeEdit(history: EditHistory, parsed: ParsedData, name: string): (EditBase & { edit: Map<string, Entity[]> }) | null {
  const edit = copyOf(parsed.entries);
  const base = history.baseOf(edit);
  if (base.unknown) {
    console.error(`resourcery: ${name} was edited from a version older than the server keeps: merging it could lose acknowledged writes`);
    return null;
  }
  let missed = 0;
  for (const line of base.lines) for (const change of line.w) missed += applyChange(parsed.entries, change);
  const writes = base.lines.length;
  const older = base.latest ? '' : ' (it was based on an older version of the file)';
  console.error(
    `resourcery: reloaded ${name} after an outside edit${writes ? `; ${writes} group(s) of journaled writes it lacks are applied on top${older}` : ''}${missed ? `; ${missed} update(s) or delete(s) target entities the edit changed: the edit wins` : ''}`,
  );
  return { ...base, edit };
}

function copyOf(entries: ReadonlyMap<string, readonly Entity[]>): Map<string, Entity[]> {
  const copy = new Map<string, Entity[]>();
  for (const [key, list] of entries) copy.set(key, list.slice());
  return copy;
}

/** How many entities one side holds and the other does not (by value, counted with repeats). */
function difference(
  a: ReadonlyMap<string, readonly Entity[]>,
  b: ReadonlyMap<string, readonly Entity[]>,
  text: WeakMap<Entity, string>,
): number {
  const key = (e: Entity) => {
    let t = text.get(e);
    if (t === undefined) text.set(e, (t = JSON.stringify(e)));
    return t;
  };
  let diff = 0;
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const counts = new Map<string, number>();
    for (const e of a.get(name) ?? []) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
    for (const e of b.get(name) ?? []) {
      const k = key(e);
      const n = counts.get(k) ?? 0;
      if (n > 0) counts.set(k, n - 1);
      else diff++;
    }
    for (const n of counts.values()) diff += n;
  }
  return diff;
}
