import { watch as watchDir, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { ServiceError } from '@resourcery/core';
import { fileStamp, parseData, sameStamp, type FileStamp, type ParsedData } from './data-file.js';

/** How long the file must be quiet after an outside change before it is reloaded. */
const WATCH_SETTLE_MS = 100;

/**
 * Watches the data file for changes (`--watch`). It watches the directory, since editors
 * often save by renaming a new file over the old one, and reports a change once the file
 * has been quiet for a moment.
 */
export class FileWatch {
  private watcher: FSWatcher | undefined;

  constructor(private readonly file: string) {}

  get active(): boolean {
    return this.watcher !== undefined;
  }

  start(changed: () => void): void {
    if (this.watcher) return;
    let timer: NodeJS.Timeout | undefined;
    const base = basename(this.file);
    this.watcher = watchDir(dirname(this.file), (_event, name) => {
      if (name !== null && name !== base) return;
      // Editors write in bursts (truncate, write, rename): settle first.
      clearTimeout(timer);
      timer = setTimeout(changed, WATCH_SETTLE_MS);
    });
    this.watcher.on('error', (e) => console.error(`resourcery: watching ${this.file} stopped:`, e));
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }
}

/** The file's stamp when something other than the store changed it since `known`, else null. */
export async function editedSince(file: string, known: FileStamp | null): Promise<FileStamp | null> {
  const now = await fileStamp(file);
  // A deleted file is not an edit to keep: the next compaction writes it again.
  return now === null || sameStamp(now, known) ? null : now;
}

/**
 * The data of a file edited outside the server; when it does not parse (half-written or
 * mistyped), logs why and throws Conflict: the data served so far is kept, and writes are
 * refused until the file parses.
 */
export function parseEdit(file: string, buffer: Buffer): ParsedData {
  try {
    return parseData(file, buffer.toString('utf8'));
  } catch (e) {
    console.error(`resourcery: ${basename(file)} was edited but does not load; keeping the data served so far:`, (e as Error).message);
    throw new ServiceError(
      'Conflict',
      `The data file was edited outside the server and is not valid yet; nothing was written (${(e as Error).message.replace(file, basename(file))})`,
    );
  }
}
