import type { Entity } from '@resourcery/core';
import { keyIdentity } from '@resourcery/core/storage';
import type { ParsedData } from './data-file.js';
import { applyChange, type Change, type WriteLine } from './journal.js';

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
 * no journal. The base is the version the edit differs least from (an entity of the same
 * key with another value counts once), the older one on a tie: a copy lacking writes
 * differs from each newer version by those writes as well, and applying a write the edit
 * already holds changes nothing (mergeEdit). The writes after the base are applied on top
 * (docs/cli-durability.md).
 */
export class EditHistory {
  private base: Map<string, Entity[]>;
  private baseSeq: number;
  private lines: WriteLine[] = [];
  private versions: number[] = [];
  /** Versions were folded into the base: an edit older than the base cannot be told apart. */
  private folded = false;

  /** `keyOf` names a top-level key's key properties (null when it has none): entities are matched by key as well as by value. */
  constructor(
    entries: ReadonlyMap<string, readonly Entity[]>,
    seq: number,
    readonly keyOf: (name: string) => readonly string[] | null = () => null,
  ) {
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
    const diffs = [{ seq: this.baseSeq, diff: difference(at, edit, text, this.keyOf) }];
    let next = 0;
    for (const seq of this.versions) {
      for (; next < this.lines.length && this.lines[next].seq <= seq; next++)
        for (const change of this.lines[next].w) applyChange(at, change);
      diffs.push({ seq, diff: difference(at, edit, text, this.keyOf) });
    }
    // The version the edit differs least from; on a tie the older one, whose later writes
    // then apply on top: those the edit already holds change nothing (mergeEdit), while
    // taking the newer one would drop the others. (Before, the newest version won unless an
    // older one differed at most half as much: a copy lacking one write and changing one
    // entity differed by 2 and 3, so that write was lost.)
    let best = diffs[0];
    for (const d of diffs) if (d.diff < best.diff) best = d;
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

/** An edit merged: its base, the writes applied on top of it (as applied), and the edit as written. */
export interface MergedEdit extends EditBase {
  /** Appended entities left out because the edit holds their key (the journal still has them). */
  skipped: number;
  /** The edit as written, for the history's next base. */
  edit: Map<string, Entity[]>;
}

/**
 * Applies to an edit (parsed, changed in place) the writes it lacks, against the version it
 * was based on, and says so on stderr; null (said loudly) when the edit may be older than
 * every version kept. `edit` is the edit as written, for the history's next base. An
 * appended entity whose key the edit already holds is not appended again: the edit has it
 * (changed by hand, or the base was taken older than it was), and the edit wins.
 */
export function mergeEdit(history: EditHistory, parsed: ParsedData, name: string): MergedEdit | null {
  const edit = copyOf(parsed.entries);
  const base = history.baseOf(edit);
  if (base.unknown) {
    console.error(`resourcery: ${name} was edited from a version older than the server keeps: merging it could lose acknowledged writes`);
    return null;
  }
  let missed = 0;
  let skipped = 0;
  const applied: WriteLine[] = [];
  // Per top-level key with a key: the key identities its entities hold, built when first needed.
  const held = new Map<string, Set<unknown>>();
  for (const line of base.lines) {
    const w: Change[] = [];
    applied.push({ seq: line.seq, w });
    for (const change of line.w) {
      const key = history.keyOf(change.r);
      if (change.s || !change.a?.length || key === null || key.length === 0) {
        missed += applyChange(parsed.entries, change);
        w.push(change);
        held.delete(change.r);
        continue;
      }
      if (change.u?.length || change.d?.length) {
        missed += applyChange(parsed.entries, { r: change.r, u: change.u, d: change.d });
        held.delete(change.r);
      }
      let ids = held.get(change.r);
      if (ids === undefined) held.set(change.r, (ids = new Set((parsed.entries.get(change.r) ?? []).map((e) => keyIdentity(e, key)))));
      const appended: Entity[] = [];
      for (const e of change.a) {
        const id = keyIdentity(e, key);
        if (id !== undefined && ids.has(id)) skipped++;
        else {
          appended.push(e);
          ids.add(id);
        }
      }
      applyChange(parsed.entries, { r: change.r, a: appended });
      w.push(appended.length === change.a.length ? change : { ...change, a: appended });
    }
  }
  const writes = base.lines.length;
  const older = base.latest ? '' : ' (it was based on an older version of the file)';
  console.error(
    `resourcery: reloaded ${name} after an outside edit${writes ? `; ${writes} group(s) of journaled writes it lacks are applied on top${older}` : ''}${missed ? `; ${missed} update(s) or delete(s) target entities the edit changed: the edit wins` : ''}${skipped ? `; ${skipped} entity(ies) appended hold a key the edit already has: the edit's are kept` : ''}`,
  );
  return { ...base, lines: applied, skipped, edit };
}

function copyOf(entries: ReadonlyMap<string, readonly Entity[]>): Map<string, Entity[]> {
  const copy = new Map<string, Entity[]>();
  for (const [key, list] of entries) copy.set(key, list.slice());
  return copy;
}

/**
 * How many entities one side holds and the other does not (by value, counted with
 * repeats); an entity of one side and one of the other with the same key (an entity
 * changed) count once.
 */
function difference(
  a: ReadonlyMap<string, readonly Entity[]>,
  b: ReadonlyMap<string, readonly Entity[]>,
  text: WeakMap<Entity, string>,
  keyOf: (name: string) => readonly string[] | null,
): number {
  const textOf = (e: Entity) => {
    let t = text.get(e);
    if (t === undefined) text.set(e, (t = JSON.stringify(e)));
    return t;
  };
  let diff = 0;
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const onlyA = new Map<string, Entity[]>();
    for (const e of a.get(name) ?? []) {
      const t = textOf(e);
      const list = onlyA.get(t);
      if (list === undefined) onlyA.set(t, [e]);
      else list.push(e);
    }
    const onlyB: Entity[] = [];
    for (const e of b.get(name) ?? []) {
      const list = onlyA.get(textOf(e));
      if (list !== undefined && list.length > 0) list.pop();
      else onlyB.push(e);
    }
    const key = keyOf(name);
    const changed = new Map<unknown, number>();
    for (const list of onlyA.values())
      for (const e of list) {
        diff++;
        const id = key?.length ? keyIdentity(e, key) : undefined;
        if (id !== undefined) changed.set(id, (changed.get(id) ?? 0) + 1);
      }
    for (const e of onlyB) {
      const id = key?.length ? keyIdentity(e, key) : undefined;
      const n = id === undefined ? 0 : (changed.get(id) ?? 0);
      if (n > 0) changed.set(id, n - 1);
      else diff++;
    }
  }
  return diff;
}
