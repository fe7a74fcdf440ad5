import type { Entity } from '../query/conditions.js';
import type { ContentType } from './content-type.js';
import { chunked } from './chunked.js';
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
    if (result.kind === 'entities' || result.kind === 'stream') return chunked(result.entities, '', line, nothing);
    return `${writeJson(result, context)}\n`;
  },
};

const line = (entity: Entity) => `${JSON.stringify(entity)}\n`;
const nothing = () => '';
