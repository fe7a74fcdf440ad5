import { jsonStringEnd, skipJsonSpace } from '../util/json-bytes.js';
import { nextTurn } from '../util/turn.js';

/**
 * A large JSON body parsed in slices (docs/limits.md#large-work): a top-level array is cut
 * at its own commas into slices of about SLICE_BYTES bytes, and each slice is decoded and
 * parsed by one native JSON.parse, other requests getting a turn between slices. The
 * value is the one JSON.parse gives for the whole text, and so is the error of a body that
 * is not JSON (the same message, the same position) or not UTF-8. Anything but an array
 * (one large object) is decoded in slices and parsed in one go.
 *
 * The commas are found in the bytes: in UTF-8 no byte of a multi-byte character is ASCII,
 * so a quote, a backslash, a bracket or a comma byte is that character, and a slice cut at
 * a comma holds whole characters. No text of the whole body is made (a string of megabytes
 * costs a copy in one turn when it is first read); the scan jumps from quote to quote.
 */

/** Bytes parsed in one slice; a slice ends at the first top-level comma past it. */
const SLICE_BYTES = 128 * 1024;
/** parseWhole needs the slice before a failing one to hold the ten characters JSON.parse quotes. */
const MIN_SLICE = 16;
/** Bytes decoded from UTF-8 between two turns. */
const DECODE_BYTES = 1024 * 1024;

const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** What the body is not: thrown by parseInSlices, read by json.ts. */
export class NotUtf8 extends Error {}

const fatalDecoder = () => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** UTF-8 text decoded a megabyte at a time, a turn between; NotUtf8 on bytes that are not UTF-8. */
export async function decodeInSlices(body: Uint8Array): Promise<string> {
  // A decoder of its own: one that threw mid-stream is not reused.
  const decoder = fatalDecoder();
  let text = '';
  for (let at = 0; at < body.length; at += DECODE_BYTES) {
    const end = Math.min(body.length, at + DECODE_BYTES);
    text += decode(decoder, body.subarray(at, end), end < body.length);
    if (end < body.length) await nextTurn();
  }
  return text;
}

function decode(decoder: ReturnType<typeof fatalDecoder>, bytes: Uint8Array, stream = false): string {
  try {
    return decoder.decode(bytes, { stream });
  } catch {
    throw new NotUtf8();
  }
}

/** Where the scan of one body stands. */
interface Scan {
  bytes: Buffer;
  /** Index of the next byte to look at. */
  at: number;
  /** Nesting below the top-level array: 0 at its own commas. */
  depth: number;
  /** Elements seen in the slice scanned last. */
  elements: number;
  /** Whether the top-level array's closing bracket was reached. */
  closed: boolean;
  /** A bracket that does not fit, or the end inside the array: not JSON (JSON.parse says where). */
  broken: boolean;
}

/**
 * JSON.parse of the body's UTF-8 text, in slices when it is one array (`sliceBytes`:
 * smaller in tests). Throws NotUtf8, or JSON.parse's SyntaxError.
 */
export async function parseInSlices(body: Uint8Array, sliceBytes = SLICE_BYTES): Promise<unknown> {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const open = skipJsonSpace(bytes, 0);
  if (bytes[open] !== OPEN_ARRAY || bytes[skipJsonSpace(bytes, open + 1)] === CLOSE_ARRAY) return JSON.parse(await decodeInSlices(bytes));
  const decoder = fatalDecoder();
  const scan: Scan = { bytes, at: open + 1, depth: 0, elements: 0, closed: false, broken: false };
  const out: unknown[] = [];
  // The slice parsed last: where its bytes start, and where its text starts in the whole text.
  let previous = { byte: -1, char: -1 };
  let start = { byte: open + 1, char: open + 1 };
  while (!scan.closed) {
    const end = scanSlice(scan, start.byte + Math.max(MIN_SLICE, sliceBytes));
    const text = decode(decoder, bytes.subarray(start.byte, end));
    let values: unknown;
    try {
      values = scan.broken ? undefined : JSON.parse(`[${text}]`);
    } catch {
      values = undefined;
    }
    if (!Array.isArray(values) || values.length !== scan.elements) return parseWhole(bytes, open, previous);
    for (const v of values) out.push(v);
    previous = start;
    start = { byte: end + 1, char: start.char + text.length + 1 };
    if (!scan.closed) await nextTurn();
  }
  // After the array only whitespace, and the rest must be UTF-8 too.
  if (skipJsonSpace(bytes, scan.at) !== bytes.length) return parseWhole(bytes, open, previous);
  return out;
}

/**
 * Scans from scan.at to the first top-level comma at or past `past` (or to the array's
 * closing bracket, or the body's end) and returns its index: the slice ends there.
 */
function scanSlice(scan: Scan, past: number): number {
  const { bytes } = scan;
  let { at, depth } = scan;
  let elements = 1;
  const n = bytes.length;
  while (at < n) {
    const c = bytes[at];
    if (c === QUOTE) {
      const close = jsonStringEnd(bytes, at + 1);
      at = close < 0 ? n : close;
      continue;
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth === 0) {
        if (c === CLOSE_OBJECT) scan.broken = true;
        scan.closed = true;
        break;
      }
      depth--;
    } else if (c === COMMA && depth === 0) {
      if (at >= past) break;
      elements++;
    }
    at++;
  }
  if (at >= n) {
    scan.broken = true;
    scan.closed = true;
  }
  scan.depth = depth;
  scan.elements = elements;
  scan.at = at + 1;
  return Math.min(at, n);
}

/**
 * A slice did not parse: the error of the whole body, without parsing the slices before
 * it again. The rest of the body is decoded (bytes that are not UTF-8 anywhere make that
 * the error, as for a small body). The text before the slice parsed last (`previous`) is
 * blanked out: the same length, the same characters from there on, so JSON.parse stops at
 * the same character with the same message (its position, and the ten characters either
 * side it quotes, which that slice keeps). Should that text parse after all, the whole
 * body is parsed as it is.
 */
async function parseWhole(bytes: Buffer, open: number, previous: { byte: number; char: number }): Promise<unknown> {
  if (previous.byte < 0) return JSON.parse(await decodeInSlices(bytes));
  const rest = await decodeInSlices(bytes.subarray(previous.byte));
  JSON.parse(`${bytes.toString('latin1', 0, open + 1)}${' '.repeat(previous.char - open - 1)}${rest}`);
  return JSON.parse(await decodeInSlices(bytes));
}
