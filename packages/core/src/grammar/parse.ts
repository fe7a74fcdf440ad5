import { ServiceError } from '../errors.js';
import { LRUCache } from 'lru-cache';
import { Locator } from './locator.js';
import { parseLiteral, type Literal } from './literal.js';
import type { RawItem } from './ast.js';
import { pathFormOf } from './query-string.js';
import { parse as parseRaw } from './uri-parser.js';
import { decodeLoose } from '../util/uri-decode.js';

export type Operator = '=' | '!=' | '<' | '>' | '<=' | '>=';

export interface Condition {
  locator: Locator;
  op: Operator;
  value: Literal;
  /** The item as written, for messages. */
  text: string;
}

/**
 * A condition item with alternatives (`Status=open|Status=pending`, `Id=1|2|3`): true
 * when any of them is (docs/uri.md). Items are still ANDed.
 */
export interface AnyOf {
  anyOf: readonly Condition[];
  /** The item as written, for messages. */
  text: string;
}

/** One `&`-separated item of the conditions part. */
export type ConditionItem = Condition | AnyOf;

/** The item's alternatives: itself when it has none. */
export function alternativesOf(item: ConditionItem): readonly Condition[] {
  return 'anyOf' in item ? item.anyOf : [item];
}

/** The locator every alternative compares with `=`, when the item is an IN list (`Id=1|2|3`); null otherwise. */
export function inListLocator(item: AnyOf): Locator | null {
  const first = item.anyOf[0].locator;
  for (const c of item.anyOf) if (c.op !== '=' || c.locator.text !== first.text) return null;
  return first;
}

export const META_KEYS = [
  'unsafe',
  'limit',
  'offset',
  'order_asc',
  'order_desc',
  'select',
  'add',
  'rename',
  'distinct',
  'search',
  'search_regex',
  'safepost',
  'count',
  'embed',
] as const;
export type MetaKey = (typeof META_KEYS)[number];

export interface MetaEntry {
  key: MetaKey;
  /** Percent-decoded value. */
  value: string;
}

/** A request URI split, decoded and typed. Immutable: parse results are shared via a cache. */
export interface ParsedUri {
  /** Decoded resource name ('' means the resource listing). */
  resource: string;
  macro: boolean;
  view: string | null;
  conditions: readonly ConditionItem[];
  meta: readonly MetaEntry[];
  /**
   * A problem found in the conditions or meta-conditions. It is raised only after the
   * resource has been resolved, so that error records name the resource.
   */
  error: ServiceError | null;
  /**
   * A lone value with no operator in the conditions part (`/posts/1`): it addresses the
   * resource's key, which only the resource knows (docs/keys.md). Composite keys: `7,3`.
   * `error` then says how to write a condition; it is raised only when the resource has no key.
   */
  bare?: string;
  /** `bare` split at its commas before decoding, so `%2C` stays inside a composite key's value. */
  bareValues?: string[];
  /**
   * With `bare`: the first problem in the rest of the URI (meta-conditions, extra parts, a
   * query string). It stands even when the bare value is a key: `/posts/20/comments` is a 400,
   * never a request on post 20 (docs/keys.md).
   */
  restError?: ServiceError | null;
}

const cache = new LRUCache<string, ParsedUri>({ max: 2000 });
/**
 * A URI longer than this is kept parsed only when it comes again: a long URI (an IN list of
 * 100 keys is ~700 characters and 100 conditions) is mostly new each time, and keeping the
 * parses of 2,000 of them made the collector's work cost more than the parsing itself
 * (docs/performance.md#orin-lists-and-several-order-keys-issue-27). The long URIs seen once
 * are kept as text only, which the collector does not walk.
 */
const LONG_URI = 512;
const seenOnce = new LRUCache<string, true>({ max: 256 });
let lastUri: string | undefined;
let lastParsed: ParsedUri | undefined;

/** Parses a URI path (the part after the service's base path); results are cached. */
export function parseUri(uri: string): ParsedUri {
  // The URI parsed last is the cache's most recent entry: a client repeating one URI skips the lookup.
  if (uri === lastUri) return lastParsed!;
  let parsed = cache.get(uri);
  if (parsed === undefined) {
    parsed = parseUncached(uri);
    if (uri.length <= LONG_URI || seenOnce.has(uri)) cache.set(uri, parsed);
    else seenOnce.set(uri, true);
  }
  lastUri = uri;
  lastParsed = parsed;
  return parsed;
}

export function clearParseCache(): void {
  lastUri = undefined;
  lastParsed = undefined;
  cache.clear();
  seenOnce.clear();
}

function parseUncached(uri: string): ParsedUri {
  const path = stripQuery(uri);
  if (path.length > 0 && path[0] !== '/') throw new ServiceError('InvalidUriSyntax', `The URI must start with '/': '${short(path)}'`);
  const raw = parseRaw(path);
  // Raised after the resource resolves (like condition errors), so the error record names it.
  const tooManyParts =
    raw.extra !== null && raw.extra.text !== ''
      ? new ServiceError(
          'InvalidUriSyntax',
          `Too many parts in the URI: a URI has at most /<resource>/<conditions>/<meta-conditions>, but '${short(raw.extra.text)}' follows at position ${raw.extra.offset}`,
        )
      : null;
  const resource = decode(raw.resource.name, 'resource name');
  const view = raw.resource.view === null ? null : decode(raw.resource.view, 'view name');
  let error: ServiceError | null = tooManyParts ?? queryStringError(uri, path);
  let restError = error;
  let conditions: ConditionItem[] = [];
  let meta: MetaEntry[] = [];
  const items = raw.conditions ?? [];
  let bare: string | undefined;
  let bareValues: string[] | undefined;
  // A lone item with no operator may be a key value; its error stands unless the resource has a key.
  // Written with an operator-like character (`Age~3`, `Age!3`) it is an operator typo, never a key.
  if (
    items.length === 1 &&
    items[0].op === null &&
    items[0].alternatives === undefined &&
    items[0].text !== '' &&
    !/[~!<>=^*]/.test(items[0].text)
  ) {
    try {
      bare = decode(items[0].text, 'key value');
      bareValues = items[0].text.split(',').map((v) => decode(v, 'key value'));
      toCondition(items[0]);
    } catch (e) {
      if (!ServiceError.is(e)) throw e;
      error ??= e;
    }
  }
  try {
    conditions = bare === undefined ? items.map(toConditionItem) : [];
    if (bare !== undefined) restError ??= nestedRoute(resource, bare, raw.meta);
    meta = (raw.meta ?? []).map(toMetaEntry);
  } catch (e) {
    if (!ServiceError.is(e)) throw e;
    error ??= e;
    restError ??= e;
  }
  return bare === undefined
    ? { resource, macro: raw.resource.macro, view: view === '' ? null : view, conditions, meta, error }
    : { resource, macro: raw.resource.macro, view: view === '' ? null : view, conditions, meta, error, bare, bareValues, restError };
}

/**
 * `/posts/20/comments` (a json-server nested route) is no meta-condition: a 400 naming the
 * part and saying how to write it as a condition on the child (docs/keys.md).
 */
function nestedRoute(resource: string, bare: string, meta: RawItem[] | null): ServiceError | null {
  if (meta === null || meta.length !== 1 || meta[0].op !== null || !/^[A-Za-z_][\w-]*$/.test(meta[0].text)) return null;
  const child = meta[0].text;
  const parent = resource.length > 1 && /s$/i.test(resource) ? resource.slice(0, -1) : resource;
  return new ServiceError(
    'InvalidUriSyntax',
    `'${short(child)}' at position ${meta[0].offset} follows the key '${short(bare)}' of '${short(resource)}', but it is no meta-condition (<name>=<value>) and there are no nested routes: to address the ${short(child)} of ${short(resource)} ${short(bare)}, write a condition on the child's property that holds the key, e.g. /${short(child)}/${short(parent)}Id=${short(bare)}`,
  );
}

/** `?...` is never read: a 400 that shows the same query in the path (a fragment is ignored). */
function queryStringError(uri: string, path: string): ServiceError | null {
  if (uri.length === path.length || uri[path.length] !== '?') return null;
  const query = uri.slice(path.length + 1).split('#')[0];
  if (query === '') return null;
  return new ServiceError(
    'InvalidUriSyntax',
    `A query string is not read: write the query in the path, as in ${short(pathFormOf(path, query))} (/<resource>/<conditions>/<meta-conditions>)`,
  );
}

function stripQuery(uri: string): string {
  const q = uri.indexOf('?');
  const h = uri.indexOf('#');
  const end = Math.min(q < 0 ? uri.length : q, h < 0 ? uri.length : h);
  return end === uri.length ? uri : uri.slice(0, end);
}

function toConditionItem(item: RawItem): ConditionItem {
  if (item.alternatives === undefined) return toCondition(item);
  const anyOf: Condition[] = [];
  for (const alt of item.alternatives) {
    const previous = anyOf[anyOf.length - 1];
    if (previous !== undefined && alt.op !== null && alt.key === '') {
      // An operator without a locator (`Age<18|>65`): the previous alternative's locator.
      const c = toCondition({ ...alt, key: '_' });
      anyOf.push({ ...c, locator: previous.locator, text: `${previous.locator.text}${c.text}` });
    } else if (alt.op !== null || previous === undefined) anyOf.push(toCondition(alt));
    else {
      // No operator: the previous alternative's locator and operator with this value. Its text
      // decodes as the value did (decode throws where decodeLoose would keep the text).
      const value = decode(alt.text, 'condition value');
      anyOf.push({
        locator: previous.locator,
        op: previous.op,
        value: parseLiteral(value),
        text: `${previous.locator.text}${previous.op}${value}`,
      });
    }
  }
  return { anyOf, text: decodeLoose(item.text) };
}

function toCondition(item: RawItem): Condition {
  if (item.op === null) {
    const decoded = decodeLoose(item.text);
    const hint =
      decoded === item.text
        ? ''
        : ` (written '${short(item.text)}': percent-encoded characters other than %3C and %3E are data, not operators)`;
    throw new ServiceError(
      'InvalidConditionOperator',
      `No valid operator in condition '${short(decoded)}' at position ${item.offset}${hint}. Operators are =, !=, <, >, <=, >=: write <property>=<value>, e.g. id=${short(decoded)} (a bare value addresses an entity only in a resource that declares a key)`,
    );
  }
  // A raw operator character right after the operator is a typo (`Age==3`, `Age<>3`); encoded ones are data.
  if (/^(=|<|>|!=)/.test(item.value)) {
    throw new ServiceError(
      'InvalidConditionOperator',
      `Invalid operator in condition '${short(decodeLoose(item.text))}' at position ${item.offset}. Operators are =, !=, <, >, <=, >=`,
    );
  }
  const key = decode(item.key, 'condition');
  if (key.trim() === '')
    throw new ServiceError(
      'InvalidConditionSyntax',
      `Condition '${short(decodeLoose(item.text))}' at position ${item.offset} has no property locator`,
    );
  if (key.split('.').some((s) => s === ''))
    throw new ServiceError('InvalidConditionSyntax', `Invalid property locator '${short(key)}' in condition at position ${item.offset}`);
  return {
    locator: new Locator(key),
    op: item.op as Operator,
    value: parseLiteral(decode(item.value, 'condition value')),
    text: decodeLoose(item.text),
  };
}

function toMetaEntry(item: RawItem): MetaEntry {
  const key = decode(item.key, 'meta-condition').toLowerCase();
  if (item.op !== '=') {
    throw new ServiceError(
      'InvalidMetaConditionOperator',
      `Meta-condition '${short(decodeLoose(item.text))}' at position ${item.offset} must have the form <name>=<value>`,
    );
  }
  if (!(META_KEYS as readonly string[]).includes(key)) {
    throw new ServiceError(
      'InvalidMetaConditionKey',
      `Unknown meta-condition '${short(decode(item.key, 'meta-condition'))}' at position ${item.offset}. Valid names: ${META_KEYS.join(', ')}`,
    );
  }
  return { key: key as MetaKey, value: decode(item.value, 'meta-condition value') };
}

/** Percent-decoding; `+` stays `+`. Malformed escapes or UTF-8 are a client error. */
function decode(text: string, what: string): string {
  if (text.indexOf('%') < 0) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ServiceError('InvalidUriSyntax', `Invalid percent-encoding in ${what} '${short(text)}'`);
  }
}

function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
