/**
 * Building Resourcery URIs safely. The server splits a URI on `/`, then on `&`, then on
 * `|` (alternatives), then each item at its operator, and only then percent-decodes names
 * and values (docs/uri.md). So
 * operators are written as they are, and every name and value is encoded, including the
 * characters encodeURIComponent leaves alone (`!`, `'`, `(`, `)`, `*`) so that no value
 * can be read as an operator or a quote.
 */

export type Operator = '=' | '!=' | '<' | '>' | '<=' | '>=';
export type Value = string | number | boolean | null | Date;

export interface Condition {
  property: string;
  operator: Operator;
  /** A list: any of the values (`Id=1|2|3`, docs/uri.md "Alternatives"). */
  value: Value | readonly Value[];
}

export const OPERATORS: readonly Operator[] = ['=', '!=', '<', '>', '<=', '>='];

/** Percent-encodes a name or value for one URI item. */
export function encodePart(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A property locator (`Address.City`): each dot-separated name encoded, dots kept. */
export function encodeLocator(locator: string): string {
  if (locator === '' || locator.split('.').some((s) => s === '')) throw new TypeError(`Invalid property locator '${locator}'`);
  return locator.split('.').map(encodePart).join('.');
}

/**
 * A condition value literal. Strings are always quoted, so `'02139'` stays a string and
 * `'null'` is not null; numbers, booleans and null are written bare; dates as ISO 8601.
 */
export function encodeValue(value: Value): string {
  if (value === null) return 'null';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`Cannot write ${value} in a URI`);
    return String(value);
  }
  if (typeof value === 'boolean') return String(value);
  if (value instanceof Date) return encodePart(value.toISOString());
  if (typeof value !== 'string') throw new TypeError(`Unsupported condition value ${String(value)}`);
  return `'${encodePart(value)}'`;
}

export function encodeCondition(c: Condition): string {
  if (!OPERATORS.includes(c.operator)) throw new TypeError(`Unknown operator '${c.operator}': use ${OPERATORS.join(' ')}`);
  const head = `${encodeLocator(c.property)}${c.operator}`;
  const values: readonly Value[] = Array.isArray(c.value) ? (c.value as readonly Value[]) : [c.value as Value];
  // Each alternative written in full (`Status='open'|Status='done'`): a value alone that
  // holds an encoded `<` or `>` (%3C, %3E) would be split there as at an operator.
  if (values.length === 0) throw new TypeError(`No values for '${c.property}': a list needs at least one`);
  return values.map((v) => head + encodeValue(v)).join('|');
}

/**
 * One key value of a bare-key URI (`/Person/7`): numbers bare, strings encoded (never
 * quoted), `~` too, since a lone item with an operator-like character is an operator typo.
 */
export function encodeKey(value: string | number): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`Cannot write ${value} in a URI`);
    return String(value);
  }
  if (typeof value !== 'string' || value === '') throw new TypeError('A key value is a number or a non-empty string');
  return encodePart(value).replace(/~/g, '%7E');
}

export interface UriParts {
  resource: string;
  macro?: boolean;
  view?: string;
  /** Already encoded items (conditions or a bare key). */
  conditions: string[];
  /** Already encoded `name=value` meta-condition items. */
  meta: string[];
}

/** `/<resource>[-<view>]/<conditions>/<meta>`, with `_` for an empty part before a non-empty one. */
export function buildUri(parts: UriParts): string {
  let uri = `/${parts.macro ? '$' : ''}${parts.resource.split('.').map(encodePart).join('.')}`;
  if (parts.view) uri += `-${encodePart(parts.view)}`;
  const conditions = parts.conditions.join('&');
  const meta = parts.meta.join('&');
  if (meta !== '') return `${uri}/${conditions || '_'}/${meta}`;
  if (conditions !== '') return `${uri}/${conditions}`;
  return uri;
}
