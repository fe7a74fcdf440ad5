import type { JsonSchema } from '../query/schema-types.js';
import type { IndexedProperty, StorageIndex } from '../storage/storage.js';

/**
 * An index a resource declares (ResourceDefinition.indexes): one property, several (in
 * order: equality on the first ones, order on the next), or the full form.
 */
export type IndexDefinition =
  | string
  | readonly string[]
  | { properties: string | readonly string[]; unique?: boolean; ignoreCase?: boolean };

const TYPES: Record<string, IndexedProperty['type']> = { string: 'string', number: 'number', integer: 'number', boolean: 'boolean' };

/**
 * The declared indexes as storages get them, each property typed by the schema when it
 * names exactly one scalar type. Property names are top-level names spelled as the
 * entities spell them (a storage may refuse entities that spell them otherwise).
 */
export function resolveIndexes(definitions: readonly IndexDefinition[], resource: string, schema?: JsonSchema): StorageIndex[] {
  return definitions.map((d) => {
    const full =
      typeof d === 'string' || Array.isArray(d)
        ? { properties: d as string | readonly string[] }
        : (d as Exclude<IndexDefinition, string | readonly string[]>);
    const names = typeof full.properties === 'string' ? [full.properties] : [...full.properties];
    const folded = new Set<string>();
    for (const name of names) {
      if (name === '' || name.includes('.') || name.includes('\0')) {
        throw new Error(`Index of '${resource}': '${name}' is not a top-level property name`);
      }
      if (folded.has(name.toLowerCase())) throw new Error(`Index of '${resource}': '${name}' is named twice`);
      folded.add(name.toLowerCase());
    }
    if (names.length === 0) throw new Error(`Index of '${resource}': name at least one property`);
    return {
      properties: names.map((name) => ({ name, type: typeOf(schema?.properties?.[name]) })),
      unique: 'unique' in full ? full.unique === true : false,
      ignoreCase: 'ignoreCase' in full ? full.ignoreCase === true : false,
    };
  });
}

function typeOf(schema: JsonSchema | undefined): IndexedProperty['type'] {
  const type = Array.isArray(schema?.type) && schema.type.length === 1 ? schema.type[0] : schema?.type;
  return typeof type === 'string' ? TYPES[type] : undefined;
}
