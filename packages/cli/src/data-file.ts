import { createHash } from 'node:crypto';
import { open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Entity } from '@resourcery/core';
import { ObjectInSlices } from './data-slices.js';

/** The data file's content: each top-level key (as spelled in the file) and its entities. */
export interface ParsedData {
  entries: Map<string, Entity[]>;
  /** Keys holding an object (json-server's singular resources): one entity, saved back as an object. */
  singular: Set<string>;
}

/** Keys starting with `Service.` hold the service's own data (macros, webhooks, pending deliveries). */
export function isAdminKey(name: string): boolean {
  return name.toLowerCase().startsWith('service.');
}

/** The data file's text as entries; throws a message naming the file when it is not a data file. */
export function parseData(file: string, text: string): ParsedData {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
  }
  return entriesOf(file, data);
}

/** Bytes read from the data file at a time (two buffers of this size, taking turns). */
const READ_BYTES = 256 * 1024;

/**
 * Reads and parses the data file a piece at a time, hashing its bytes as they come
 * (data-slices.ts): no buffer or text of the whole file is made, so at start the memory
 * holds the entities and little more. The same entries, or the same error, as parseData of
 * the file's text; the hash is hashOf's of its bytes.
 */
export async function readDataFile(file: string): Promise<{ parsed: ParsedData; hash: string }> {
  const parser = new ObjectInSlices();
  const sha = createHash('sha1');
  const handle = await open(file, 'r');
  try {
    // The bytes not parsed yet are copied to the front of the other buffer, the next read goes after them.
    let buffers = [Buffer.allocUnsafe(READ_BYTES), Buffer.allocUnsafe(READ_BYTES)];
    let rest = buffers[0].subarray(0, 0);
    for (;;) {
      let into = buffers[1];
      // A value longer than a buffer (a large entity, a one-entity resource): the buffers grow.
      if (into.length < rest.length + READ_BYTES) buffers = [buffers[0], (into = Buffer.allocUnsafe(2 * (rest.length + READ_BYTES)))];
      rest.copy(into, 0);
      const { bytesRead } = await handle.read(into, rest.length, into.length - rest.length, null);
      sha.update(into.subarray(rest.length, rest.length + bytesRead));
      const bytes = into.subarray(0, rest.length + bytesRead);
      const end = bytesRead === 0;
      const used = parser.feed(bytes, end);
      if (parser.failed || end) break;
      rest = bytes.subarray(used);
      buffers = [into, buffers[0]];
    }
  } finally {
    await handle.close();
  }
  if (parser.done) return { parsed: entriesOf(file, parser.value), hash: sha.digest('hex') };
  // Not JSON (or not one object): the whole text, for JSON.parse's message.
  const bytes = await readFile(file);
  return { parsed: parseData(file, bytes.toString('utf8')), hash: hashOf(bytes) };
}

function entriesOf(file: string, data: unknown): ParsedData {
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new Error(`${file} must hold a JSON object whose properties are arrays of entities`);
  const parsed: ParsedData = { entries: new Map(), singular: new Set() };
  for (const [name, value] of Object.entries(data)) {
    const single = value !== null && typeof value === 'object' && !Array.isArray(value) && !isAdminKey(name);
    if (single) parsed.singular.add(name);
    const entities: unknown = single ? [value] : value;
    if (!Array.isArray(entities) || entities.some((e) => e === null || typeof e !== 'object' || Array.isArray(e))) {
      throw new Error(`"${name}" in ${file} must be an array of objects (a resource) or an object (a one-entity resource)`);
    }
    parsed.entries.set(name, entities as Entity[]);
  }
  return parsed;
}

/** What identifies a version of the data file in its journal's checkpoints. */
export function hashOf(content: Buffer | string): string {
  return createHash('sha1').update(content).digest('hex');
}

export interface FileStamp {
  ino: number;
  size: number;
  mtimeMs: number;
}

export async function fileStamp(file: string): Promise<FileStamp | null> {
  const s = await stat(file).catch(() => null);
  return s && { ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
}

export function sameStamp(a: FileStamp | null, b: FileStamp | null): boolean {
  return a !== null && b !== null && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** Removes the temp files a crash or a failed save left beside the data file (`<file>.<pid>.tmp`, `<file>.journal.<pid>.tmp`, `<file>.merge.<pid>.tmp`). */
export async function removeLeftovers(file: string): Promise<void> {
  const prefix = `${basename(file)}.`;
  const names = await readdir(dirname(file)).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith(prefix) && /^(journal\.|merge\.)?\d+\.tmp$/.test(name.slice(prefix.length)))
      await unlink(join(dirname(file), name)).catch(() => undefined);
  }
}
