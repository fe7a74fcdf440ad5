// json-server's relations, inferred from the data (docs/cli.md#relations): a property `postId`
// in `comments` holds the key of an entity of `posts`. `comments` then has the to-one
// relation `post` (`embed=post`, json-server's `_expand=post`) and `posts` the to-many
// relation `comments` (`embed=comments`, `_embed=comments`).
import type { Entity, RelationDefinition } from '@resourcery/core';

/** A resource of the data, as inference sees it. */
export interface DataResource {
  name: string;
  /** Its key: a relation points at a resource with a key of one property. */
  key?: string | readonly string[];
  /** Property names the resource declares (its schema): a relation may not take one's name. */
  declared?: readonly string[];
  /** Some of its entities (the first ones): their property names are read. */
  sample: readonly Entity[];
}

/** How many entities of each resource inference reads. */
export const SAMPLED = 100;

const NAME = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/**
 * The relations json-server's convention gives each resource: for every `<singular>Id` (or
 * `<singular>_id`) property of a resource whose plural names another resource with a key,
 * to-one `<singular>` here and to-many `<resource name>` there. A name already taken by a
 * property or another relation is left out.
 */
export function inferRelations(resources: readonly DataResource[]): Map<string, Record<string, RelationDefinition>> {
  const out = new Map<string, Record<string, RelationDefinition>>();
  const byName = new Map(resources.map((r) => [r.name.toLowerCase(), r]));
  const taken = new Map<string, Set<string>>();
  const namesOf = (r: DataResource) => {
    let names = taken.get(r.name);
    if (names === undefined) {
      names = new Set([...(r.declared ?? []), ...propertiesOf(r.sample)].map((n) => n.toLowerCase()));
      taken.set(r.name, names);
    }
    return names;
  };
  const add = (r: DataResource, name: string, definition: RelationDefinition): boolean => {
    const names = namesOf(r);
    if (!NAME.test(name) || names.has(name.toLowerCase())) return false;
    names.add(name.toLowerCase());
    out.set(r.name, { ...out.get(r.name), [name]: definition });
    return true;
  };
  for (const child of resources) {
    for (const property of propertiesOf(child.sample)) {
      const singular = /^(.+?)(?:Id|_id|ID)$/.exec(property)?.[1];
      if (singular === undefined) continue;
      const parent = pluralsOf(singular)
        .map((p) => byName.get(p.toLowerCase()))
        .find((r) => r !== undefined && r !== child);
      const key = typeof parent?.key === 'string' ? parent.key : parent?.key?.length === 1 ? parent.key[0] : undefined;
      if (parent === undefined || key === undefined) continue;
      if (!add(child, singular, { toOne: parent.name, via: property, references: key })) continue;
      // As json-server 0.17 does: `DELETE /posts/1` removes the post's comments too (docs/cli.md#relations).
      add(parent, child.name, { toMany: child.name, via: property, references: key, onDelete: 'cascade' });
    }
  }
  return out;
}

/** Property names of the entities, in order of first appearance. */
function propertiesOf(entities: readonly Entity[]): string[] {
  const names = new Set<string>();
  for (const e of entities.slice(0, SAMPLED)) if (e !== null && typeof e === 'object') for (const k of Object.keys(e)) names.add(k);
  return [...names];
}

/** The plurals json-server's pluralize gives the common nouns: post -> posts, category -> categories, box -> boxes. */
function pluralsOf(singular: string): string[] {
  const plurals = [`${singular}s`, `${singular}es`];
  if (/[^aeiou]y$/i.test(singular)) plurals.push(`${singular.slice(0, -1)}ies`);
  plurals.push(singular);
  return plurals;
}
