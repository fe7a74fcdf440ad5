/**
 * Scanning JSON text as UTF-8 bytes without decoding it: what reading a large JSON text in
 * slices needs (request bodies in content-types/json-slices.ts, the CLI's data file).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index just past the quote that closes a string whose text starts at `from`; -1 when the bytes end first. */
export function jsonStringEnd(bytes: Uint8Array, from: number): number {
  let at = from;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let i = quote - 1; i >= from && bytes[i] === BACKSLASH; i--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** The index of the first byte at or after `from` that is not JSON whitespace (the length when none is). */
export function skipJsonSpace(bytes: Uint8Array, from: number): number {
  let at = from;
  for (; at < bytes.length; at++) {
    const c = bytes[at];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
  }
  return at;
}
