import v8 from 'node:v8';

/**
 * V8's non-backtracking engine (the `l` flag) runs a regular expression in time linear in
 * the subject, so no pattern a client sends can stall the event loop. Enabling it only
 * makes the `l` flag available; other regular expressions in the process are unchanged.
 */
let available: boolean | undefined;

export function linearEngineAvailable(): boolean {
  if (available === undefined) {
    try {
      v8.setFlagsFromString('--enable-experimental-regexp-engine');
      available = new RegExp('a', 'l').test('a');
    } catch {
      available = false;
    }
  }
  return available;
}

/**
 * The pattern with its literal letters lower-cased, escapes kept as written (`\D` stays
 * `\D`), to match a lower-cased subject: the linear engine has no `i` flag.
 */
export function lowerCasePattern(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c !== '\\') {
      out += c.toLowerCase();
      continue;
    }
    const next = pattern[i + 1] ?? '';
    let end = i + 2;
    if (next === 'u' && pattern[end] === '{') end = pattern.indexOf('}', end) + 1 || pattern.length;
    else if (next === 'u') end += 4;
    else if (next === 'x') end += 2;
    else if (next === 'c') end += 1;
    else if ((next === 'p' || next === 'P') && pattern[end] === '{') end = pattern.indexOf('}', end) + 1 || pattern.length;
    else if (next === 'k' && pattern[end] === '<') end = pattern.indexOf('>', end) + 1 || pattern.length;
    const escape = pattern.slice(i, end);
    // \x41 and \u0041 name a letter: lower-case it like a literal one.
    const code = (next === 'x' && /^\\x[0-9a-fA-F]{2}$/.test(escape)) || (next === 'u' && /^\\u[0-9a-fA-F]{4}$/.test(escape)) ? parseInt(escape.slice(2), 16) : -1;
    const lower = code < 0 ? '' : String.fromCharCode(code).toLowerCase();
    out += lower.length === 1 && lower.charCodeAt(0) !== code ? `\\u${lower.charCodeAt(0).toString(16).padStart(4, '0')}` : escape;
    i = end - 1;
  }
  return out;
}
