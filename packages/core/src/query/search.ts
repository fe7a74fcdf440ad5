import { ServiceError } from '../errors.js';
import { LRUCache } from 'lru-cache';
import { jsonTextSearch } from './json-text-search.js';
import { compileLinear, type LinearRegExp } from './linear-regex.js';
import { Locator } from '../grammar/locator.js';
import type { Entity } from './conditions.js';

/** Counts the characters a search scans (scan.ts ScanMeter: it stops a request over its budget). */
interface SearchMeter {
  add(characters: number): void;
}

/** A search predicate; the meter, when given, counts the characters it scans. */
export type SearchPredicate = (e: Entity, meter?: SearchMeter) => boolean;

/** `Pattern[,PropertyScope,CS|CI]` of the search and search_regex meta-conditions. */
export interface SearchSettings {
  pattern: string;
  scope: Locator | null;
  caseSensitive: boolean;
}

const SCOPE = /^[\p{L}\p{N}_$.]*$/u;

export function parseSearchSettings(value: string): SearchSettings {
  const parts = value.split(',');
  let caseSensitive = false;
  let scope: Locator | null = null;
  if (parts.length >= 2 && /^(cs|ci)$/i.test(parts[parts.length - 1])) {
    caseSensitive = parts.pop()!.toLowerCase() === 'cs';
  }
  if (parts.length >= 2 && SCOPE.test(parts[parts.length - 1])) {
    const s = parts.pop()!;
    scope = s === '' ? null : new Locator(s);
  }
  return { pattern: parts.join(','), scope, caseSensitive };
}

export function compileSearch(value: string): SearchPredicate {
  const { pattern, scope, caseSensitive } = parseSearchSettings(value);
  const needle = caseSensitive ? pattern : pattern.toLowerCase();
  const tokens = scope === null ? jsonTextSearch(needle, caseSensitive) : null;
  if (tokens !== null) return tokens;
  return (e, meter) => {
    const text = textOf(e, scope);
    meter?.add(text.length);
    return (caseSensitive ? text : text.toLowerCase()).includes(needle);
  };
}

const regexCache = new LRUCache<string, LinearRegExp>({ max: 500 });
const MAX_PATTERN = 1000;
/** Regular expressions only run over the first MAX_SUBJECT characters of a value. */
const MAX_SUBJECT = 100_000;

export function compileSearchRegex(value: string): SearchPredicate {
  const { pattern, scope, caseSensitive } = parseSearchSettings(value);
  const re = safeRegExp(pattern, caseSensitive);
  return (e, meter) => {
    let text = textOf(e, scope);
    if (text.length > MAX_SUBJECT) text = text.slice(0, MAX_SUBJECT);
    meter?.add(text.length);
    return re.test(text);
  };
}

/**
 * A regular expression compiled once per pattern for the linear-time engine (RE2), so no
 * pattern a client sends can backtrack: shapes that are catastrophic for a backtracking
 * engine (`(a+)+`, `(a|b)*c`) run in linear time and are accepted. The pattern must also
 * be a valid JavaScript regular expression (the documented syntax); what RE2 cannot run
 * (back-references, lookaround) is refused (docs/uri.md).
 */
function safeRegExp(pattern: string, caseSensitive: boolean): LinearRegExp {
  const key = `${caseSensitive ? 'cs' : 'ci'}/${pattern}`;
  const re = regexCache.get(key);
  if (re) return re;
  if (pattern.length > MAX_PATTERN)
    throw new ServiceError('InvalidMetaConditionValueType', `The regular expression is longer than ${MAX_PATTERN} characters`);
  try {
    // Validates the JavaScript syntax; RE2 runs the pattern.
    new RegExp(pattern, caseSensitive ? '' : 'i');
  } catch (e) {
    throw new ServiceError('InvalidMetaConditionValueType', `Invalid regular expression '${pattern}': ${(e as Error).message}`);
  }
  const linear = /\\[1-9]|\\k</.test(pattern) ? null : compileLinear(pattern, caseSensitive);
  if (linear === null) {
    throw new ServiceError(
      'InvalidMetaConditionValueType',
      `The regular expression '${pattern}' uses a feature that cannot run in linear time (lookahead, lookbehind or back-references); simplify it`,
    );
  }
  regexCache.set(key, linear);
  return linear;
}

function textOf(e: Entity, scope: Locator | null): string {
  if (scope === null) return JSON.stringify(e);
  const v = scope.get(e);
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
