import type { Entity } from '../query/conditions.js';
import { nextTurn } from '../util/turn.js';

/** Streamed bodies are written in chunks of about this many characters: few writes, little held in memory. */
export const STREAM_CHUNK = 64 * 1024;

/**
 * Entities (an array, or a 'stream' result read as they come) written as text: `head`, each entity's
 * text, then `tail(count)`, in chunks of about STREAM_CHUNK characters. The writer
 * asks for the next entity only when the body's reader takes the chunk (back-pressure),
 * and gives other requests a turn of the event loop before it makes the next chunk: a
 * body of megabytes is not made in one turn (docs/limits.md#large-work).
 */
export async function* chunked(
  entities: Iterable<Entity> | AsyncIterable<Entity>,
  head: string,
  text: (entity: Entity, index: number) => string,
  tail: (count: number) => string,
): AsyncGenerator<string> {
  let chunk = head;
  let count = 0;
  for await (const entity of entities) {
    chunk += text(entity, count++);
    if (chunk.length >= STREAM_CHUNK) {
      yield chunk;
      chunk = '';
      await nextTurn();
    }
  }
  chunk += tail(count);
  if (chunk !== '') yield chunk;
}
