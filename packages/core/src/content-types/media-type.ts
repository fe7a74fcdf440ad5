/**
 * Media-type syntax of RFC 9110 (8.3.1, 5.6.6): `type/subtype; name=value; name="quoted"`,
 * and comma-separated lists of them (Accept). Written here rather than taken from
 * `content-type` 1.0.5 / `negotiator` 1.1.0 (both run on Node 20) because, on headers the
 * service must serve, they throw or choose nothing: short bindings (`Content-Type: jl`,
 * `Accept: jl`), `Accept: application/json;raw=true` (the spec's raw parameter: negotiator
 * then matches no offer), `Accept: *`, a parameter without a value. Each case is run through
 * both in test/media-type-packages.test.ts, which fails once an upgrade closes the gap.
 */

export interface ParsedMediaType {
  /** Lower-case, without parameters or surrounding white space ('' when blank). */
  type: string;
  /** Lower-case names; the first occurrence of a name wins; quotes and escapes removed. */
  parameters: Record<string, string>;
  /** Where parsing stopped: the comma ending this entry (list mode) or the text's length. */
  index: number;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function isToken(text: string): boolean {
  return TOKEN.test(text);
}

/** `type/subtype`, both tokens. */
export function isMediaType(text: string): boolean {
  const slash = text.indexOf('/');
  return slash > 0 && isToken(text.slice(0, slash)) && isToken(text.slice(slash + 1));
}

const SEMICOLON = 59;
const COMMA = 44;
const EQUALS = 61;
const QUOTE = 34;
const BACKSLASH = 92;

function isWhite(code: number): boolean {
  return code === 32 || code === 9;
}

function trimEnd(text: string): string {
  let end = text.length;
  while (end > 0 && isWhite(text.charCodeAt(end - 1))) end--;
  return text.slice(0, end);
}

/**
 * One media type from `start`. In list mode (`list: true`) a comma ends the entry; the
 * caller resumes after `index`. Malformed parameters are skipped, never thrown on.
 */
export function parseMediaTypeAt(text: string, list = false, start = 0): ParsedMediaType {
  const length = text.length;
  const ends = (code: number) => code === SEMICOLON || (list && code === COMMA);
  let i = start;
  while (i < length && isWhite(text.charCodeAt(i))) i++;
  const typeStart = i;
  while (i < length && !ends(text.charCodeAt(i))) i++;
  const type = trimEnd(text.slice(typeStart, i)).toLowerCase();
  const parameters: Record<string, string> = Object.create(null) as Record<string, string>;
  while (i < length && text.charCodeAt(i) === SEMICOLON) {
    i++;
    while (i < length && isWhite(text.charCodeAt(i))) i++;
    const nameStart = i;
    while (i < length && text.charCodeAt(i) !== EQUALS && !ends(text.charCodeAt(i))) i++;
    if (i >= length || text.charCodeAt(i) !== EQUALS) continue;
    const name = trimEnd(text.slice(nameStart, i)).toLowerCase();
    i++;
    while (i < length && isWhite(text.charCodeAt(i))) i++;
    let value: string | undefined;
    if (i < length && text.charCodeAt(i) === QUOTE) {
      i++;
      let quoted = '';
      let from = i;
      while (i < length) {
        const code = text.charCodeAt(i);
        if (code === QUOTE) {
          value = quoted + text.slice(from, i);
          i++;
          break;
        }
        if (code === BACKSLASH && i + 1 < length) {
          quoted += text.slice(from, i);
          from = i + 1;
          i += 2;
        } else i++;
      }
      // Anything between the closing quote and the next delimiter is not part of the value.
      while (i < length && !ends(text.charCodeAt(i))) i++;
    } else {
      const valueStart = i;
      while (i < length && !ends(text.charCodeAt(i))) i++;
      value = trimEnd(text.slice(valueStart, i));
    }
    if (value !== undefined && !(name in parameters)) parameters[name] = value;
  }
  return { type, parameters, index: i };
}
