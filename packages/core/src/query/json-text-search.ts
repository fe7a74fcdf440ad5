import type { Entity } from './conditions.js';

/** Counts the characters scanned (scan.ts ScanMeter), taken by its shape so the query modules import no cycle. */
type Meter = { add(characters: number): void };

/** Characters that occur in JSON text only as syntax or inside escapes. */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const SYNTAX = /["\\{}[\],:\u0000-\u001f\ud800-\udfff]/;
/** Characters a string's JSON text escapes. */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;
/** Every character a JSON number's text can have. */
const NUMBER = /^[0-9.e+-]+$/;
/** Past this many distinct property names, a name is tested each time instead of remembered. */
const MAX_NAMES = 10_000;
const MAX_POSITIONS = 64;

/**
 * Whether an entity's JSON text (lower-cased unless case-sensitive) contains `needle`,
 * without making that text, or null when `needle` holds a JSON syntax character.
 *
 * A needle without one (no quote, backslash, brace, bracket, comma, colon or control
 * character) can only be found inside one token of the text: a property name, a string's
 * contents, a number, `true`, `false` or `null`; so each token is tested on its own. A
 * string's contents are its JSON-escaped form when it has characters JSON escapes, and
 * lower-casing a token alone gives what lower-casing the whole text gives, because the
 * quotes around it end the context of a final sigma. Nested objects and arrays are tested
 * on their JSON text. Making the whole text with `JSON.stringify` per entity cost about
 * 1 µs an entity; this about a third of it (docs/performance.md).
 */
export function jsonTextSearch(needle: string, caseSensitive: boolean): ((e: Entity, meter?: Meter) => boolean) | null {
  if (needle === '' || SYNTAX.test(needle)) return null;
  const lower = (s: string) => (caseSensitive ? s : s.toLowerCase());
  const inNumber = NUMBER.test(needle);
  const inTrue = 'true'.includes(needle);
  const inFalse = 'false'.includes(needle);
  const inNull = 'null'.includes(needle);
  const tokenHas = (s: string) => lower(ESCAPED.test(s) ? JSON.stringify(s).slice(1, -1) : s).includes(needle);
  // Names repeat from entity to entity: remembered by position (a pointer compare when
  // entities share their shape), then by name.
  const atName: string[] = [];
  const atHas: boolean[] = [];
  const names = new Map<string, boolean>();
  const nameHas = (name: string, position: number) => {
    if (atName[position] === name) return atHas[position];
    let has = names.get(name);
    if (has === undefined) {
      has = tokenHas(name);
      if (names.size < MAX_NAMES) names.set(name, has);
    }
    if (position < MAX_POSITIONS) {
      atName[position] = name;
      atHas[position] = has;
    }
    return has;
  };
  return (e, meter) => {
    if (typeof e.toJSON === 'function') return lower(JSON.stringify(e)).includes(needle);
    let scanned = 0;
    let found = false;
    let position = 0;
    for (const name in e) {
      if (!Object.prototype.hasOwnProperty.call(e, name)) continue;
      const v = e[name];
      switch (typeof v) {
        case 'string':
          scanned += v.length;
          found = tokenHas(v);
          break;
        case 'number':
          found = Number.isFinite(v) ? inNumber && String(v).includes(needle) : inNull;
          break;
        case 'boolean':
          found = v ? inTrue : inFalse;
          break;
        case 'object': {
          // null, an array, an object; JSON leaves out a property whose toJSON gives undefined.
          const text = v === null ? 'null' : JSON.stringify(v);
          if (text === undefined) continue;
          scanned += text.length;
          found = lower(text).includes(needle);
          break;
        }
        case 'bigint':
          // Not JSON: throws as JSON.stringify of the entity would.
          JSON.stringify(v);
          break;
        default:
          // undefined, functions and symbols: JSON leaves the property out, name included.
          continue;
      }
      scanned += name.length + 4;
      if (!found) found = nameHas(name, position++);
      if (found) break;
    }
    meter?.add(scanned);
    return found;
  };
}
