import { ServiceError } from '../errors.js';
import type { Condition } from '../grammar/parse.js';
import type { Literal } from './literal.js';
import { findKey } from './locator.js';

export type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; additionalProperties?: unknown; items?: JsonSchema; [k: string]: unknown };

/**
 * Types condition values by the resource's JSON Schema: `Zip=02139` on a string
 * property is the string "02139"; `Age=abc` on a number is a 400; unknown properties
 * are a 404.
 */
export function typeConditions(conditions: readonly Condition[], schema: JsonSchema | undefined): readonly Condition[] {
  if (!schema?.properties) return conditions;
  return conditions.map((c) => {
    const type = schemaTypeAt(schema, c.locator.segments, c.text);
    return type === undefined ? c : { ...c, value: convert(c.value, type, c.text) };
  });
}

/** The declared type at a locator; undefined when the schema does not say. */
function schemaTypeAt(schema: JsonSchema, segments: readonly string[], text: string): string | undefined {
  let current: JsonSchema | undefined = schema;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const types = typesOf(current);
    if ((types.includes('string') || types.includes('array')) && seg.toLowerCase() === 'length' && i === segments.length - 1) return 'number';
    if (!current?.properties) return undefined;
    const key = findKey(current.properties, seg);
    if (key === undefined) {
      if (current.additionalProperties !== undefined && current.additionalProperties !== false) return undefined;
      throw new ServiceError('UnknownProperty', `Unknown property '${segments.slice(0, i + 1).join('.')}' in condition '${text}'`);
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
  switch (type) {
    case 'string':
      // A date literal keeps comparing by time with strings that hold ISO dates.
      return value.kind === 'raw' && value.date !== undefined ? { kind: 'raw', text: raw, date: value.date } : { kind: 'string', value: raw };
    case 'number':
    case 'integer':
      if (value.kind === 'raw' && value.number !== undefined && (type === 'number' || Number.isInteger(value.number))) return { kind: 'raw', text: raw, number: value.number };
      break;
    case 'boolean':
      if (value.kind === 'raw' && value.boolean !== undefined) return { kind: 'raw', text: raw, boolean: value.boolean };
      break;
    default:
      return value;
  }
  throw new ServiceError('InvalidConditionValueType', `'${raw}' in condition '${text}' is not a valid ${type}`);
}
