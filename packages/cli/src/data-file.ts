import { createHash } from 'node:crypto';
import { readdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Entity } from '@resourcery/core';

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
