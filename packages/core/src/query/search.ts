import safeRegex from 'safe-regex2';
import { ServiceError } from '../errors.js';
import { Lru } from '../lru.js';
import { linearEngineAvailable, lowerCasePattern } from './linear-regex.js';
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
/** Regular expressions only run over the first MAX_SUBJECT characters of a value. */
const MAX_SUBJECT = 100_000;

export function compileSearchRegex(value: string): Predicate {
  const { pattern, scope, caseSensitive } = parseSearchSettings(value);
  const linear = linearEngineAvailable();
  // The linear engine has no `i` flag: case-insensitive search lower-cases pattern letters and subject.
  const re = linear ? safeRegExp(caseSensitive ? pattern : lowerCasePattern(pattern), 'l', pattern) : safeRegExp(pattern, caseSensitive ? '' : 'i');
  const lower = linear && !caseSensitive;
  return (e) => {
    let text = textOf(e, scope);
    if (text.length > MAX_SUBJECT) text = text.slice(0, MAX_SUBJECT);
    return re.test(lower ? text.toLowerCase() : text);
  };
}

/**
 * A RegExp that cannot backtrack catastrophically; compiled once per pattern. Patterns of
 * the classic catastrophic shapes are refused (400) whatever the engine; the rest run on the
 * linear-time engine when Node has it, and are held to stricter shape checks when not.
 */
export function safeRegExp(pattern: string, flags: string, asWritten = pattern): RegExp {
  const key = `${flags}/${pattern}`;
  let re = regexCache.get(key);
  if (re) return re;
  if (pattern.length > MAX_PATTERN) throw new ServiceError('InvalidMetaConditionValueType', `The regular expression is longer than ${MAX_PATTERN} characters`);
  try {
    re = new RegExp(asWritten, flags.replace('l', ''));
  } catch (e) {
    throw new ServiceError('InvalidMetaConditionValueType', `Invalid regular expression '${asWritten}': ${(e as Error).message}`);
  }
  const linear = flags.includes('l');
  if (!safeRegex(re) || hasQuantifiedAlternation(asWritten) || /\\[1-9]|\\k</.test(asWritten) || (!linear && hasAdjacentOverlappingRepeats(asWritten))) {
    throw new ServiceError('InvalidMetaConditionValueType', `The regular expression '${asWritten}' could backtrack catastrophically (nested quantifiers, quantified alternation${linear ? '' : ', adjacent repeats such as .*.*'} or back-references); simplify it`);
  }
  if (linear) {
    try {
      re = new RegExp(pattern, flags);
    } catch {
      throw new ServiceError('InvalidMetaConditionValueType', `The regular expression '${asWritten}' uses a feature that cannot run in linear time (lookahead, lookbehind, back-references or Unicode property escapes); simplify it`);
    }
  }
  regexCache.set(key, re);
  return re;
}

const QUANTIFIER = /[*+]|\{\d+(?:,\d*)?\}/y;

/**
 * Whether a repeated group holds an alternation at any depth, such as (a|a)+, ((a|a))*
 * or (a|a){30}: each repetition may take either branch, so a failing match can try
 * exponentially many paths. safe-regex2 only measures nested quantifiers.
 */
function hasQuantifiedAlternation(pattern: string): boolean {
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') groups.push(false);
    else if (c === '|' && groups.length > 0) groups[groups.length - 1] = true;
    else if (c === ')' && groups.length > 0) {
      const alternation = groups.pop()!;
      QUANTIFIER.lastIndex = i + 1;
      if (alternation && QUANTIFIER.test(pattern)) return true;
      if (alternation && groups.length > 0) groups[groups.length - 1] = true;
    }
  }
  return false;
}

const UNBOUNDED = /(?:[*+]|\{\d+,\})\??/y;
const BOUNDED = /(?:\?|\{\d+(?:,\d+)?\})\??/y;
/** Atoms that match nearly every character, so they overlap whatever they meet. */
const BROAD = new Set(['.', '\\S', '\\W', '\\D']);

/**
 * Whether two unboundedly repeated atoms that can match the same characters follow each
 * other, as in .*.*x or \w+\w+x: a failing match tries every split of the subject between
 * them, polynomial time that safe-regex2 does not measure (.*.*.*x takes minutes on 1 KB).
 */
function hasAdjacentOverlappingRepeats(pattern: string): boolean {
  let previous: string | null = null;
  let i = 0;
  while (i < pattern.length) {
    const start = i;
    const c = pattern[i];
    if (c === '(' || c === '|' || c === '^' || c === '$') {
      previous = null;
      i++;
      continue;
    }
    if (c === '\\') i += 2;
    else if (c === '[') {
      for (i += pattern[i + 1] === ']' ? 2 : 1; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
      i++;
    } else i++;
    const atom = c === ')' ? `)${start}` : pattern.slice(start, i);
    UNBOUNDED.lastIndex = i;
    if (UNBOUNDED.test(pattern)) {
      if (previous !== null && (previous === atom || [previous, atom].some((a) => BROAD.has(a) || a.startsWith('[^')))) return true;
      previous = atom;
      i = UNBOUNDED.lastIndex;
      continue;
    }
    BOUNDED.lastIndex = i;
    if (BOUNDED.test(pattern)) i = BOUNDED.lastIndex;
    previous = null;
  }
  return false;
}

function textOf(e: Entity, scope: Locator | null): string {
  if (scope === null) return JSON.stringify(e);
  const v = scope.get(e);
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
