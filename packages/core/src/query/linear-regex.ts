import { RE2JS } from 're2js';

/** A compiled regular expression that runs in time linear in its subject. */
export interface LinearRegExp {
  test(text: string): boolean;
}

/**
 * Compiles a JavaScript regular expression for RE2 (re2js, pure JavaScript): linear time
 * whatever the pattern, and no change to the host's VM flags. Null when the pattern uses
 * a feature RE2 cannot run in linear time (lookaround, back-references).
 */
export function compileLinear(pattern: string, caseSensitive: boolean): LinearRegExp | null {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern), caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
  } catch {
    return null;
  }
}
