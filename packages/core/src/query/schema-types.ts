import { ServiceError } from '../errors.js';
import type { Condition, ConditionItem } from '../grammar/parse.js';
import type { Literal } from '../grammar/literal.js';
import { findKey, type Locator } from '../grammar/locator.js';
import type { MetaConditions } from './meta-conditions.js';

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: unknown;
  items?: JsonSchema;
  [k: string]: unknown;
};

/**
 * Types condition values by the resource's JSON Schema: `Zip=02139` on a string
 * property is the string "02139"; `Age=abc` on a number is a 400; unknown properties
 * are a 404.
 */
export function typeConditions(conditions: readonly ConditionItem[], schema: JsonSchema | undefined): readonly ConditionItem[] {
  if (!schema?.properties) return conditions;
  // The alternatives of an IN list share one Locator (`Id=1|2|3`): its type is looked up once.
  let locator: Locator | undefined;
  let type: string | undefined;
  const typed = (c: Condition): Condition => {
    if (c.locator !== locator) {
      type = schemaTypeAt(schema, c.locator.segments, `condition '${c.text}'`);
      locator = c.locator;
    }
    if (type === undefined) return c;
    const value = convert(c.value, type, c.text);
    return value === c.value ? c : { ...c, value };
  };
  return conditions.map((c) => ('anyOf' in c ? { ...c, anyOf: c.anyOf.map(typed) } : typed(c)));
}

/**
 * Meta-condition locators on a resource with a schema must name declared properties, as
 * condition locators must (404 UnknownProperty); names made by add or rename are outputs.
 */
export function checkMetaLocators(meta: MetaConditions, schema: JsonSchema | undefined, embedded: ReadonlySet<string> = NONE): void {
  if (!schema?.properties) return;
  const made = new Set([...(meta.add ?? []).map((l) => l.text.toLowerCase()), ...(meta.rename ?? []).map((r) => r.to.toLowerCase())]);
  // An embedded relation's values are not the resource's properties (docs/relations.md).
  const declared = (l: Locator, where: string) => {
    if (!embedded.has(l.segments[0].toLowerCase())) schemaTypeAt(schema, l.segments, where);
  };
  const check = (l: Locator, where: string) => {
    if (!made.has(l.text.toLowerCase()) && !made.has(l.segments[0].toLowerCase())) declared(l, where);
  };
  for (const l of meta.add ?? []) declared(l, `add=${l.text}`);
  for (const r of meta.rename ?? []) declared(r.from, `rename=${r.from.text}->${r.to}`);
  for (const l of meta.safepost ?? []) schemaTypeAt(schema, l.segments, `safepost=${l.text}`);
  for (const l of meta.select ?? []) check(l, `select=${l.text}`);
  for (const k of meta.order ?? []) check(k.locator, `order=${k.locator.text}`);
}

const NONE: ReadonlySet<string> = new Set();

/** The declared type at a locator; undefined when the schema does not say. */
function schemaTypeAt(schema: JsonSchema, segments: readonly string[], where: string): string | undefined {
  let current: JsonSchema | undefined = schema;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const types = typesOf(current);
    if ((types.includes('string') || types.includes('array')) && seg.toLowerCase() === 'length' && i === segments.length - 1)
      return 'number';
    if (!current?.properties) return undefined;
    const key = findKey(current.properties, seg);
    if (key === undefined) {
      if (current.additionalProperties !== undefined && current.additionalProperties !== false) return undefined;
      throw new ServiceError('UnknownProperty', `Unknown property '${segments.slice(0, i + 1).join('.')}' in ${where}`);
    }
    current = current.properties[key];
  }
  const types = typesOf(current);
  return types.find((t) => t !== 'null');
}

function typesOf(schema: JsonSchema | undefined): string[] {
  const t = schema?.type;
  return t === undefined ? [] : Array.isArray(t) ? t : [t];
}

function convert(value: Literal, type: string, text: string): Literal {
  if (value.kind === 'null') return value;
  const raw = value.kind === 'string' ? value.value : value.text;
  // A literal already in its typed form is returned as it is (literals are immutable), so an
  // IN list of numbers or strings is typed without a copy of each alternative.
  switch (type) {
    case 'string':
      if (value.kind === 'string') return value;
      // A date literal keeps comparing by time with strings that hold ISO dates.
      return value.kind === 'raw' && value.date !== undefined
        ? { kind: 'raw', text: raw, date: value.date }
        : { kind: 'string', value: raw };
    case 'number':
    case 'integer':
      if (value.kind === 'raw' && value.number !== undefined && (type === 'number' || Number.isInteger(value.number)))
        return value.asText === undefined && value.boolean === undefined && value.date === undefined
          ? value
          : { kind: 'raw', text: raw, number: value.number };
      break;
    case 'boolean':
      if (value.kind === 'raw' && value.boolean !== undefined) return { kind: 'raw', text: raw, boolean: value.boolean };
      break;
    default:
      return value;
  }
  throw new ServiceError('InvalidConditionValueType', `'${raw}' in condition '${text}' is not a valid ${type}`);
}

/**
 * A locator spelled as the schema declares it (`notes.length` -> `Notes.Length` when
 * `Notes` is a declared string or array); undefined when the schema does not declare
 * every step (docs/uri.md, "Output names").
 */
export function schemaSpelling(schema: JsonSchema | undefined, segments: readonly string[]): string | undefined {
  const names: string[] = [];
  let current: JsonSchema | undefined = schema;
  for (let i = 0; i < segments.length; i++) {
    const key = current?.properties ? findKey(current.properties, segments[i]) : undefined;
    if (key !== undefined) {
      names.push(key);
      current = current!.properties![key];
    } else if (
      i === segments.length - 1 &&
      segments[i].toLowerCase() === 'length' &&
      typesOf(current).some((t) => t === 'string' || t === 'array')
    ) {
      names.push('Length');
    } else {
      return undefined;
    }
  }
  return names.join('.');
}
