import type { Entity } from '../query/conditions.js';
import type { ContentType } from './content-type.js';
import { chunked, STREAM_CHUNK } from './chunked.js';
import { writeJson } from './json.js';

/** Lines are sent in chunks of about this many characters: few enough writes, little held in memory. */
export const JSON_LINES_CHUNK = STREAM_CHUNK;

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
    if (result.kind === 'stream')
      return chunked(
        result.entities,
        '',
        (e) => `${JSON.stringify(e)}\n`,
        () => '',
      );
    return `${writeJson(result, context)}\n`;
  },
};

async function* lines(entities: readonly Entity[]): AsyncGenerator<string> {
  let chunk = '';
  for (const entity of entities) {
    chunk += `${JSON.stringify(entity)}\n`;
    if (chunk.length >= JSON_LINES_CHUNK) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
