// The JSON text of an entity answered alone, kept under its stamp while that stamp lasts
// as long as the entity's state (Stamp.text, MemoryStorage): a GET of an entity read
// again is stringified once per state, not once per request (docs/performance.md).
import type { Entity } from '../query/conditions.js';

/** How many texts are kept: those of the entity states answered alone most recently. */
export const MAX_TEXTS = 1024;
/** A longer text is made each time, so the texts kept hold at most MAX_TEXTS times this many characters. */
export const MAX_TEXT_LENGTH = 4096;

/** Oldest first (a Map keeps insertion order): the first is dropped when a text is added to a full cache. */
const texts = new Map<object, string>();

/**
 * `JSON.stringify(entities)`. With `state` (Result.state: the stamp of the one entity,
 * as stored), the text made the first time that state was written, the same string.
 */
export function entitiesText(entities: readonly Entity[], state: object | undefined): string {
  if (state === undefined || entities.length !== 1) return JSON.stringify(entities);
  let text = texts.get(state);
  if (text === undefined) {
    text = JSON.stringify(entities);
    if (text.length <= MAX_TEXT_LENGTH) keep(state, text);
  }
  return text;
}

function keep(state: object, text: string): void {
  if (texts.size >= MAX_TEXTS) texts.delete(texts.keys().next().value!);
  texts.set(state, text);
}

/** How many texts are kept now (tests). */
export function keptTexts(): number {
  return texts.size;
}
