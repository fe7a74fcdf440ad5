import safeRegex from 'safe-regex2';
import { ServiceError } from '../errors.js';
import { Lru } from '../lru.js';
import { Locator } from './locator.js';
import type { Entity, Predicate } from './conditions.js';

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

export function compileSearch(value: string): Predicate {
  const { pattern, scope, caseSensitive } = parseSearchSettings(value);
  const needle = caseSensitive ? pattern : pattern.toLowerCase();
  return (e) => {
    const text = textOf(e, scope);
    return (caseSensitive ? text : text.toLowerCase()).includes(needle);
  };
}

const regexCache = new Lru<string, RegExp>(500);
const MAX_PATTERN = 1000;
/** Quantified groups that hold alternation, such as (a|a)+, can take exponential time. */
const QUANTIFIED_ALTERNATION = /\([^()]*\|[^()]*\)\s*(?:[*+]|\{\d+,\d*\})/;
/** Regular expressions only run over the first MAX_SUBJECT characters of a value. */
const MAX_SUBJECT = 100_000;

export function compileSearchRegex(value: string): Predicate {
  const { pattern, scope, caseSensitive } = parseSearchSettings(value);
  const re = safeRegExp(pattern, caseSensitive ? '' : 'i');
  return (e) => {
    const text = textOf(e, scope);
    return re.test(text.length > MAX_SUBJECT ? text.slice(0, MAX_SUBJECT) : text);
  };
}

/** A RegExp that cannot backtrack catastrophically; compiled once per pattern. */
export function safeRegExp(pattern: string, flags: string): RegExp {
  const key = `${flags}/${pattern}`;
  let re = regexCache.get(key);
  if (re) return re;
  if (pattern.length > MAX_PATTERN) throw new ServiceError('InvalidMetaConditionValueType', `The regular expression is longer than ${MAX_PATTERN} characters`);
  try {
    re = new RegExp(pattern, flags);
  } catch (e) {
    throw new ServiceError('InvalidMetaConditionValueType', `Invalid regular expression '${pattern}': ${(e as Error).message}`);
  }
  if (!safeRegex(re) || QUANTIFIED_ALTERNATION.test(pattern) || /\\[1-9]|\\k</.test(pattern)) {
    throw new ServiceError('InvalidMetaConditionValueType', `The regular expression '${pattern}' could take exponential time (nested quantifiers, quantified alternation or back-references); simplify it`);
  }
  regexCache.set(key, re);
  return re;
}

function textOf(e: Entity, scope: Locator | null): string {
  if (scope === null) return JSON.stringify(e);
  const v = scope.get(e);
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
