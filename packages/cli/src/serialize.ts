import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { Entity } from '@resourcery/core';

/** Entities serialized between two yields to the event loop. */
const ENTITIES_PER_SLICE = 500;
/** Text gathered before it is handed to the writer. */
const CHUNK_CHARS = 1 << 18;

/**
 * The data file's text, exactly `JSON.stringify(data, null, 2) + '\n'`, produced in
 * slices with a yield to the event loop between them: serializing a large file in one
 * call would stall every request for its whole duration (about a second at 1M entities).
 * The entities must not change meanwhile (storages replace entities, never mutate them).
 */
export async function writeJsonInSlices(
  data: Record<string, readonly Entity[] | Entity>,
  write: (text: string) => Promise<void>,
): Promise<void> {
  const names = Object.keys(data);
  let buffer = names.length === 0 ? '{}' : '{\n';
  const flush = async (force: boolean) => {
    if (buffer.length >= CHUNK_CHARS || (force && buffer.length > 0)) {
      await write(buffer);
      buffer = '';
    }
  };
  for (const [i, name] of names.entries()) {
    const value = data[name];
    const last = i === names.length - 1;
    buffer += `  ${JSON.stringify(name)}: `;
    if (!Array.isArray(value) || value.length === 0) buffer += indent(JSON.stringify(value, null, 2), '  ');
    else {
      buffer += '[\n';
      const entities = value as readonly Entity[];
      for (let j = 0; j < entities.length; j += ENTITIES_PER_SLICE) {
        // One stringify per slice: its elements sit at depth 1, the file's at depth 2.
        const slice = JSON.stringify(entities.slice(j, j + ENTITIES_PER_SLICE), null, 2);
        buffer += `  ${slice.slice(2, -2).replace(/\n/g, '\n  ')}${j + ENTITIES_PER_SLICE >= entities.length ? '\n' : ',\n'}`;
        if (j + ENTITIES_PER_SLICE < entities.length) {
          await flush(false);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      buffer += '  ]';
    }
    buffer += last ? '\n' : ',\n';
  }
  if (names.length > 0) buffer += '}';
  buffer += '\n';
  await flush(true);
}

function indent(text: string, by: string): string {
  return text.includes('\n') ? text.replace(/\n/g, `\n${by}`) : text;
}

/** Writes the data to a temp file and fsyncs it; returns the SHA-1 of what was written. */
export async function writeDataFile(tmp: string, data: Record<string, readonly Entity[] | Entity>): Promise<string> {
  const sha = createHash('sha1');
  const handle = await open(tmp, 'w');
  try {
    // writeFile on a handle writes all of the text from the current position (write() may write part of it).
    await writeJsonInSlices(data, (text) => {
      sha.update(text);
      return handle.writeFile(text);
    });
    await handle.sync();
  } finally {
    await handle.close();
  }
  return sha.digest('hex');
}
