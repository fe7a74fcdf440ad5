// `embed` in the OpenAPI document (docs/openapi.md#relations): per resource, the relations
// `embed` accepts and the schema of the values it puts into each entity. Only relations
// whose related resource the document's reader may GET are described, as only those can be
// embedded (docs/relations.md#rights).
import type { Relation } from '../model/relations.js';
import type { Resource } from '../model/resources.js';

type Json = Record<string, unknown>;

/**
 * The relations of `r` that `embed` can use for the reader of the document: those whose
 * related resource is an entity resource among `shown` with GET. A relation whose other
 * end is missing (an app's mistake, reported when a request uses it) is left out.
 */
export function embeddable(r: Resource, shown: readonly Resource[]): Relation<Resource>[] {
  if (r.relations.size === 0) return [];
  const readable = new Set(shown.filter((s) => s.kind === 'EntityResource' && s.methods.includes('GET')).map((s) => s.name));
  const out: Relation<Resource>[] = [];
  for (const name of r.relations.names()) {
    let relation: Relation<Resource> | undefined;
    try {
      relation = r.relations.get(name);
    } catch {
      continue;
    }
    if (relation !== undefined && readable.has(relation.target.name)) out.push(relation);
  }
  return out;
}

/**
 * The schema of an entity of `r` as a GET answers it, `embed` or not: its own schema with
 * each relation's value as an optional property (to-one: the related entity or null;
 * to-many: an array of them).
 */
export function embeddedSchema(own: Json, relations: readonly Relation<Resource>[], refOf: (r: Resource) => Json): Json {
  const properties: Json = { ...(own.properties as Json | undefined) };
  for (const relation of relations) {
    const related = refOf(relation.target);
    properties[relation.name] =
      relation.kind === 'one'
        ? {
            description: `With embed=${relation.name}: the ${relation.target.name} whose ${relation.references.text} this entity's ${relation.via.text} holds, or null`,
            oneOf: [related, { type: 'null' }],
          }
        : {
            description: `With embed=${relation.name}: the ${relation.target.name} entities whose ${relation.via.text} holds this entity's ${relation.references.text}, in their key order`,
            type: 'array',
            items: related,
            maxItems: relation.maxEmbedded,
          };
  }
  return { ...own, properties };
}

/**
 * The metaConditions path parameter of a resource with relations: the shared one's text,
 * then the relation names `embed` takes here (also as `x-embed`).
 */
export function metaConditionsWithEmbed(shared: Json, relations: readonly Relation<Resource>[]): Json {
  const names = relations.map((r) => r.name);
  return {
    ...shared,
    description: `${String(shared.description)}\n\nHere \`embed\` takes: ${names.map((n) => `\`${n}\``).join(', ')} (comma-separated, e.g. \`embed=${names.join(',')}\`).`,
    'x-embed': names,
  };
}
