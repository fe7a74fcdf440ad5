/**
 * The data file's top-level object parsed from its bytes as they are read, in slices
 * (docs/performance.md, "CLI start-up with 1,000,000 entities"): each array is cut at its
 * own commas into slices of about SLICE_BYTES, and each slice is decoded and parsed by one
 * native JSON.parse. Neither the file's bytes nor its text are ever held whole: at a
 * million entities (174 MB) both were alive while JSON.parse built the entities.
 *
 * The structure is found in the bytes: in UTF-8 no byte of a multi-byte character is
 * ASCII, so a quote, a backslash, a bracket, a brace, a colon or a comma byte is that
 * character, and a slice cut at a comma holds whole characters (decoded as the whole text
 * would decode them). Only JSON is answered: for anything else (a bracket that does not
 * fit, a trailing comma, a byte-order mark, text after the object) the parse `failed`, and
 * the caller parses the whole text for JSON.parse's own message.
 */
import { jsonStringEnd, skipJsonSpace } from '@resourcery/core/storage';

/**
 * Bytes parsed in one slice (a slice ends at the first comma of its array past it): small
 * enough that the slice, its text and the parse stay in the processor's cache. At a million
 * entities, 32 KiB slices took 0.65-0.75x the CPU of one JSON.parse of the whole text, 1 MiB
 * slices 1.3x.
 */
const SLICE_BYTES = 32 * 1024;

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** What the parse expects next. */
type State = 'object' | 'first' | 'name' | 'colon' | 'value' | 'elements' | 'after' | 'done';

/** Thrown inside feed: the bytes are not one JSON object. */
class NotJson extends Error {}

export class ObjectInSlices {
  /** The object parsed, once `done`. */
  readonly value: Record<string, unknown> = {};
  /** The bytes are not one JSON object (or not JSON): the caller parses the whole text. */
  failed = false;
  private state: State = 'object';
  private name = '';
  private array: unknown[] = [];
  /** No element of the array read yet. */
  private empty = true;
  /** Whether slices end at guesses (`}`, a comma, `{`) rather than at a scan of every byte. */
  private guessing = false;

  /** `sliceBytes`: smaller in tests. */
  constructor(private readonly sliceBytes = SLICE_BYTES) {}

  /** Whether the object was read to its end, with nothing but whitespace after it. */
  get done(): boolean {
    return this.state === 'done' && !this.failed;
  }

  /**
   * Parses what it can of `bytes` (the bytes not consumed by the last call, then those read
   * since) and returns how many it consumed: the caller keeps the rest and adds more. `end`:
   * no bytes follow these. Sets `failed` when the bytes are not one JSON object.
   */
  feed(bytes: Buffer, end: boolean): number {
    try {
      return this.parse(bytes, end);
    } catch {
      // NotJson, or a slice JSON.parse refused.
      this.failed = true;
      return bytes.length;
    }
  }

  private parse(bytes: Buffer, end: boolean): number {
    let at = 0;
    for (;;) {
      const next = skipJsonSpace(bytes, at);
      if (next === bytes.length) {
        if (end && this.state !== 'done') throw new NotJson();
        return next;
      }
      const c = bytes[next];
      switch (this.state) {
        case 'done':
          throw new NotJson();
        case 'object':
          if (c !== OPEN_OBJECT) throw new NotJson();
          at = next + 1;
          this.state = 'first';
          break;
        case 'first':
          if (c === CLOSE_OBJECT) {
            at = next + 1;
            this.state = 'done';
          } else this.state = 'name';
          break;
        case 'name': {
          if (c !== QUOTE) throw new NotJson();
          const nameEnd = jsonStringEnd(bytes, next + 1);
          if (nameEnd < 0) return need(next, end);
          const name: unknown = JSON.parse(bytes.toString('utf8', next, nameEnd));
          if (typeof name !== 'string') throw new NotJson();
          this.name = name;
          at = nameEnd;
          this.state = 'colon';
          break;
        }
        case 'colon':
          if (c !== COLON) throw new NotJson();
          at = next + 1;
          this.state = 'value';
          break;
        case 'value':
          if (c === OPEN_ARRAY) {
            this.array = [];
            this.empty = true;
            at = next + 1;
            this.state = 'elements';
            break;
          }
          {
            // Anything else is parsed whole: it ends at the object's next comma or closing brace.
            const { at: valueEnd } = scan(bytes, next, next);
            if (valueEnd === bytes.length) return need(next, end);
            this.set(JSON.parse(bytes.toString('utf8', next, valueEnd)));
            at = valueEnd;
          }
          break;
        case 'elements': {
          if (this.empty) {
            if (c === CLOSE_ARRAY) {
              this.set(this.array);
              at = next + 1;
              break;
            }
            this.empty = false;
            this.guessing = c === OPEN_OBJECT;
          }
          const cut = this.slice(bytes, next, end);
          if (cut < 0) return next;
          at = cut + 1;
          if (bytes[cut] === CLOSE_ARRAY) this.set(this.array);
          break;
        }
        case 'after':
          if (c === COMMA) this.state = 'name';
          else if (c === CLOSE_OBJECT) this.state = 'done';
          else throw new NotJson();
          at = next + 1;
          break;
      }
    }
  }

  /**
   * Parses the array's elements from `start` (an element's first byte) to a comma of the
   * array or its closing bracket, and returns that byte's index; -1 when more bytes are
   * needed. The slice ends at a guess where the array holds objects (`}`, a comma, `{`: the
   * first such comma past the slice's size), taken when the text before it parses as
   * whole elements: the parse read the same text from the same element boundary, so it
   * stopped where the array's own comma is. Where the guess fails (the array's end, objects
   * holding arrays of objects, a `}` in a string), the slice's bytes are scanned, and so is
   * the rest of the array. Guessing spares reading each byte in JavaScript.
   */
  private slice(bytes: Buffer, start: number, end: boolean): number {
    const size = this.sliceBytes;
    if (this.guessing) {
      if (!end && start + 2 * size + 1 > bytes.length) return -1;
      const guess = commaBetweenObjects(bytes, start + size, start + 2 * size);
      const values = guess < 0 ? undefined : parsedOrUndefined(bytes, start, guess);
      if (values !== undefined) {
        for (const v of values) this.array.push(v);
        return guess;
      }
      this.guessing = false;
    }
    const { at: cut, elements } = scan(bytes, start, start + size);
    if (cut === bytes.length) return need(-1, end);
    if (bytes[cut] === CLOSE_OBJECT) throw new NotJson();
    const values: unknown = JSON.parse(`[${bytes.toString('utf8', start, cut)}]`);
    // Commas the scan counted that JSON.parse did not (an empty element fails JSON.parse anyway).
    if (!Array.isArray(values) || values.length !== elements) throw new NotJson();
    for (const v of values) this.array.push(v);
    return cut;
  }

  /** Sets the property just read, as JSON.parse does: an own one even for `__proto__`; a repeated name keeps its place and takes the last value. */
  private set(value: unknown): void {
    Object.defineProperty(this.value, this.name, { value, writable: true, enumerable: true, configurable: true });
    this.state = 'after';
  }
}

/** Where the bytes end before what is being read does: wait for more (`at`), or, at the end, not JSON. */
function need(at: number, end: boolean): number {
  if (end) throw new NotJson();
  return at;
}

/** The elements of the text from `start` to `end` as one array's, or undefined when it is not that. */
function parsedOrUndefined(bytes: Buffer, start: number, end: number): unknown[] | undefined {
  try {
    return JSON.parse(`[${bytes.toString('utf8', start, end)}]`) as unknown[];
  } catch {
    return undefined;
  }
}

/** The index of the first comma from `from` (and before `before`) with `}` before it and `{` after it, whitespace aside; -1 when none. */
function commaBetweenObjects(bytes: Buffer, from: number, before: number): number {
  let at = from;
  while (at < before) {
    const close = bytes.indexOf(CLOSE_OBJECT, at);
    if (close < 0 || close >= before) return -1;
    const comma = skipJsonSpace(bytes, close + 1);
    if (bytes[comma] === COMMA && bytes[skipJsonSpace(bytes, comma + 1)] === OPEN_OBJECT) return comma;
    at = close + 1;
  }
  return -1;
}

/**
 * From `from`, the index of the first comma at depth 0 at or past `past`, or of the first
 * closing bracket or brace at depth 0 (the enclosing value's end), or the length of the
 * bytes; and the elements before it (commas at depth 0, plus one).
 */
function scan(bytes: Buffer, from: number, past: number): { at: number; elements: number } {
  let depth = 0;
  let elements = 1;
  const n = bytes.length;
  let at = from;
  for (; at < n; at++) {
    const c = bytes[at];
    if (c === QUOTE) {
      const close = jsonStringEnd(bytes, at + 1);
      if (close < 0) return { at: n, elements };
      at = close - 1;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth === 0) break;
      depth--;
    } else if (c === COMMA && depth === 0) {
      if (at >= past) break;
      elements++;
    }
  }
  return { at, elements };
}
