/**
 * Content negotiation (RFC 9110 12.5.1 and 8.3) over content-type bindings.
 *
 * Header syntax (quoted strings, escapes, case and white space, comma-separated lists)
 * is parsed in media-type.ts. What is left here: short bindings such as `jl`, which are
 * tokens rather than media types, and the choice among our bindings.
 */
import { isMediaType, isToken, parseMediaTypeAt } from './media-type.js';

export interface MediaRange {
  /** Lower-case type without parameters: `application/json`, `*\/*`, `text/*`, or a short binding like `jl`. */
  type: string;
  /** Parameters without q; lower-case names, quotes removed. */
  params: Record<string, string>;
  /** Quality 0..1 (1 when not given). */
  q: number;
}

/** Anything that can be chosen by binding; bindings in lower case. */
export interface Bindable {
  bindings: readonly string[];
}

export interface Choice<T> {
  value: T;
  params: Record<string, string>;
}

/** Looser than RFC 9110's qvalue: clients send `q=.2` or `q=0.25000`, and both mean what they say. */
const QVALUE = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

function toRange(type: string, parameters: Record<string, string>): MediaRange | null {
  // `*` alone is what some old clients (Java's HttpURLConnection) send for `*/*`.
  const name = type === '*' ? '*/*' : type;
  if (!isMediaType(name) && !isToken(name)) return null;
  const params: Record<string, string> = {};
  let q = 1;
  for (const key of Object.keys(parameters)) {
    const value = parameters[key];
    if (key === 'q') {
      q = QVALUE.test(value) ? Number(value) : NaN;
      if (!(q <= 1)) return null;
    } else params[key] = key === 'raw' ? value.toLowerCase() : value;
  }
  return { type: name, params, q };
}

/** One media type or short binding (a Content-Type value); null when it is malformed. */
export function parseMediaType(text: string): MediaRange | null {
  const { type, parameters } = parseMediaTypeAt(text);
  return toRange(type, parameters);
}

/** The entries of an Accept value in listed order; malformed entries are left out. */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  let start = 0;
  while (start < header.length) {
    const { type, parameters, index } = parseMediaTypeAt(header, true, start);
    if (type !== '') {
      const range = toRange(type, parameters);
      if (range) ranges.push(range);
    }
    start = index + 1;
  }
  return ranges;
}

/** How closely a range names one of the (lower-case) bindings: 3 exact, 2 `type/*`, 1 `*\/*`, 0 not at all. */
function specificity(range: string, bindings: readonly string[]): number {
  if (range === '*/*') return 1;
  if (range.endsWith('/*')) {
    const prefix = range.slice(0, -1);
    return bindings.some((b) => b.startsWith(prefix)) ? 2 : 0;
  }
  return bindings.includes(range) ? 3 : 0;
}

/**
 * The candidate the client prefers. Each candidate takes the q of the most specific range
 * that names it (so `json;q=0, *\/*` refuses JSON but accepts the rest); the highest q > 0
 * wins, ties go to the range listed first, then to the candidate listed first.
 */
export function negotiate<T extends Bindable>(ranges: readonly MediaRange[], candidates: readonly T[]): Choice<T> | undefined {
  let best: { value: T; range: MediaRange; position: number } | undefined;
  for (const value of candidates) {
    let match: { range: MediaRange; position: number; specificity: number } | undefined;
    ranges.forEach((range, position) => {
      const s = specificity(range.type, value.bindings);
      if (s > 0 && (!match || s > match.specificity || (s === match.specificity && range.q > match.range.q)))
        match = { range, position, specificity: s };
    });
    if (!match || match.range.q === 0) continue;
    if (!best || match.range.q > best.range.q || (match.range.q === best.range.q && match.position < best.position)) {
      best = { value, range: match.range, position: match.position };
    }
  }
  return best && { value: best.value, params: best.range.params };
}
