import { LRUCache } from 'lru-cache';
import type { Entity } from './conditions.js';

/** Counts the characters scanned (scan.ts ScanMeter), taken by its shape so the query modules import no cycle. */
type Meter = { add(characters: number): void };

/** Characters that occur in JSON text only as syntax or inside escapes. */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const SYNTAX = /["\\{}[\],:\u0000-\u001f\ud800-\udfff]/;
/** Characters a string's JSON text escapes. */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;
/**
 * What follows the backslash of each escape JSON.stringify writes in a string: the short
 * forms, `u00XX` for other control characters and `udXXX` for a lone surrogate (lower-case hex).
 */
const ESCAPE_TAILS: string[] = ['b', 'f', 'n', 'r', 't'];
for (let c = 0; c < 0x20; c++) ESCAPE_TAILS.push(`u${c.toString(16).padStart(4, '0')}`);
for (let c = 0xd800; c <= 0xdfff; c++) ESCAPE_TAILS.push(`u${c.toString(16)}`);

/**
 * The part of `needle` that a string's own characters must hold for its JSON-escaped
 * form to contain `needle` where the string does not: null when no escape can help (only
 * the string itself is searched), '' when any string with an escaped character may match.
 * A match the escapes make starts inside one escape's tail (the needle has no backslash),
 * so some prefix of the needle ends a tail and the rest follows the escaped character as
 * the string's own characters (or the needle lies within one tail); the longest such
 * prefix leaves the shortest rest, which every other rest ends with.
 */
function escapedRest(needle: string): string | null {
  // Comparing against every tail costs about 0.1 ms: once per needle, not per request.
  const known = restCache.get(needle);
  if (known !== undefined) return known === false ? null : known;
  const rest = escapedRestOf(needle);
  restCache.set(needle, rest ?? false);
  return rest;
}

const restCache = new LRUCache<string, string | false>({ max: 500 }); // false: no rest (lru-cache holds no null)

function escapedRestOf(needle: string): string | null {
  // Within one tail (`u` in `\u001f`): any string with an escape may hold it.
  if (needle.length <= 5 && ESCAPE_TAILS.some((t) => t.includes(needle))) return '';
  let longest = 0;
  for (let k = 1; k <= Math.min(5, needle.length); k++) {
    const prefix = needle.slice(0, k);
    if (ESCAPE_TAILS.some((t) => t.endsWith(prefix))) longest = k;
  }
  if (longest === 0) return null;
  // Lower-casing a sigma depends on its neighbours: decided on the escaped text itself.
  if (longest === needle.length || /[σς]/.test(needle)) return '';
  return needle.slice(longest);
}

const same = (s: string) => s;
const lowerCase = (s: string) => s.toLowerCase();

/** Whether a text has a letter or any character outside ASCII (which lower-casing may touch or make). */
function hasLetters(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i) | 0x20;
    if (text.charCodeAt(i) > 0x7f || (c >= 0x61 && c <= 0x7a)) return true;
  }
  return false;
}

/** The longest run of ASCII characters other than letters in a text ('' when none). */
function uncasedRun(text: string): string {
  let best = '';
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && !hasLetters(text[i])) continue;
    if (i - start > best.length) best = text.slice(start, i);
    start = i + 1;
  }
  return best;
}

/** ASCII letters from the rarest in English text to the commonest, without `i` and `k`. */
const BY_RARITY = 'zqxjvbpygfwmucldrhsnoate';

/**
 * The rarest ASCII letter of a text other than `i` and `k` ('' when none). Lower-casing
 * makes such a letter only from itself and its upper case (of every character only U+0130
 * and the Kelvin sign U+212A lower-case to ASCII letters: `i` with a dot, and `k`), so a
 * string holding neither cannot hold the text once lower-cased, and needs no copy.
 */
function rareLetter(text: string): string {
  for (const letter of BY_RARITY) if (text.includes(letter)) return letter;
  return '';
}

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
  // A needle of ASCII digits and punctuation (`99999@`, `2024-05`) is found in a text exactly
  // when it is found in the lower-cased text: lower-casing maps only letters, and only to
  // letters and combining marks. So no lower-cased copy of each string is made for it.
  const lower = caseSensitive || !hasLetters(needle) ? same : lowerCase;
  const inNumber = NUMBER.test(needle);
  const inTrue = 'true'.includes(needle);
  const inFalse = 'false'.includes(needle);
  const inNull = 'null'.includes(needle);
  const rest = escapedRest(needle);
  // The string itself first: a match there is one in its escaped form too (the needle has
  // no character JSON escapes), and most strings then need no test for escaped characters.
  // The rest ends the needle, so a string without it holds neither: most strings get one test
  // (docs/performance.md, "Search over every property").
  // Digits and punctuation of the rest (or of the needle, when no escape can help) stand as
  // they are in the lower-cased text, so a string without them is passed over uncopied.
  const probe = lower === same || rest === '' ? '' : uncasedRun(rest ?? needle);
  // Else a letter of it in either case: a string without one is passed over uncopied too.
  const letter = lower === same || rest === '' || probe !== '' ? '' : rareLetter(rest ?? needle);
  const upper = letter.toUpperCase();
  const sigma = lower !== same && /[σς]/.test(needle);
  const tokenHas = (s: string) => {
    if (probe !== '' && !s.includes(probe)) return false;
    if (letter !== '' && !s.includes(letter) && !s.includes(upper)) return false;
    // Lower-casing a sigma depends on the letters beside it, and an escape puts letters there (`\nΣ`).
    if (sigma && ESCAPED.test(s)) return lower(JSON.stringify(s).slice(1, -1)).includes(needle);
    const text = lower(s);
    if (rest === null) return text.includes(needle);
    if (rest !== '' && !text.includes(rest)) return false;
    return text.includes(needle) || (ESCAPED.test(s) && lower(JSON.stringify(s).slice(1, -1)).includes(needle));
  };
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
      if (!found) {
        // The name at this position in the entity before, tested in the loop itself (a call per property cost a third of the scan).
        found = atName[position] === name ? atHas[position] : nameHas(name, position);
        position++;
      }
      if (found) break;
    }
    meter?.add(scanned);
    return found;
  };
}
