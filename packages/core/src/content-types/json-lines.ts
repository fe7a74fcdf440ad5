import type { Entity } from '../query/conditions.js';
import type { ContentType } from './content-type.js';
import { chunked, STREAM_CHUNK } from './chunked.js';
import { writeJson } from './json.js';

/**
 * JSON Lines (write only): one entity per `\n`-terminated line, streamed. Any other result
 * (a REPORT count, the outcome of a change) is one line holding what JSON would write.
 */
export const jsonLines: ContentType = {
  name: 'JSON Lines',
  mimeType: 'application/jsonlines',
  bindings: ['application/jsonlines', 'application/x-ndjson', 'application/x-jsonlines', 'jl'],
  extension: 'jsonl',
  streams: true,
  write(result, context) {
    if (result.kind === 'entities') return lines(result.entities);
    if (result.kind === 'stream') return chunked(result.entities, '', line, nothing);
    const text = writeJson(result, context);
    return typeof text === 'string'
      ? `${text}
`
      : endLine(text);
  },
};

/** A large answer's JSON, in chunks, then the line's end. */
async function* endLine(text: AsyncIterable<string>): AsyncGenerator<string> {
  yield* text;
  yield '\n';
}

const line = (entity: Entity) => `${JSON.stringify(entity)}\n`;

/**
 * The lines of entities held in memory, in chunks of about STREAM_CHUNK characters: a plain
 * loop between chunks. `for await` over an array (chunked) awaits every entity, a promise
 * turn each, which made the export cost more than writing the lines (docs/performance.md,
 * Export). The next chunk is made when the body's reader asks for it (back-pressure) and
 * after other requests had a turn.
 */
async function* lines(entities: readonly Entity[]): AsyncGenerator<string> {
  let chunk = '';
  for (let i = 0; i < entities.length; i++) {
    chunk += `${JSON.stringify(entities[i])}\n`;
    if (chunk.length >= STREAM_CHUNK) {
      yield chunk;
      chunk = '';
      // Other requests get a turn between chunks: a body of megabytes is not made in one turn.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  if (chunk !== '') yield chunk;
}
const nothing = () => '';
