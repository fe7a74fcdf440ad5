/** Parsing of Accept and Content-Type values (RFC 9110 media ranges with parameters). */

export interface MediaRange {
  /** Lower-case type without parameters: `application/json`, `*\/*`, or a short binding like `jl`. */
  type: string;
  /** Lower-case parameter names; quotes removed. q is not included. */
  params: Record<string, string>;
  q: number;
}

/** Splits on a separator outside double quotes. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' && text[i - 1] !== '\\') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

export function parseMediaType(text: string): MediaRange {
  const [type, ...rest] = splitOutsideQuotes(text, ';');
  const params: Record<string, string> = {};
  let q = 1;
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const name = p.slice(0, eq).trim().toLowerCase();
    let value = p.slice(eq + 1).trim();
    if (value.length >= 2 && value[0] === '"' && value[value.length - 1] === '"') value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name === 'q') {
      const n = Number(value);
      q = Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 1;
    } else params[name] = name === 'raw' ? value.toLowerCase() : value;
  }
  return { type: type.trim().toLowerCase(), params, q };
}

/** Accept entries by preference: highest q first, ties in listed order; q=0 dropped. */
export function parseAccept(header: string): MediaRange[] {
  return splitOutsideQuotes(header, ',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseMediaType)
    .filter((r) => r.q > 0)
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.q - a.r.q || a.i - b.i)
    .map(({ r }) => r);
}
