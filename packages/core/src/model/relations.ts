// Relations between resources (docs/relations.md): to-one (a property here holds the key of an
// entity there) and to-many (a property there holds this entity's key). They are declared on
// addResource and resolved against the registry when first used, so the related resource may
// be added later.
import { ServiceError } from '../errors.js';
import type { ConditionItem } from '../grammar/parse.js';
import { findKey, Locator } from '../grammar/locator.js';
import type { JsonSchema } from '../query/schema-types.js';

/** The default of `maxEmbedded`: most related entities one embedded to-many array holds. */
const DEFAULT_MAX_EMBEDDED = 1000;

/** A relation as an app declares it, under its name in `relations` (docs/relations.md). */
export type RelationDefinition =
  | {
      /** To-one: the related resource; `via` here holds the key of one of its entities. */
      toOne: string;
      /** The property here that holds the related entity's key. */
      via: string;
      /** The property there that `via` holds; default: the related resource's declared key. */
      references?: string;
    }
  | {
      /** To-many: the related resource; `via` there holds this entity's key. */
      toMany: string;
      /** The property there that holds this entity's key. */
      via: string;
      /** The property here that `via` holds; default: this resource's declared key. */
      references?: string;
      /** Most related entities one embedded array holds (default: the service's `maxEmbedded`, 1000). */
      maxEmbedded?: number;
      /**
       * What deleting entities here does to their related entities there: 'cascade' deletes
       * them too, 'restrict' refuses (409) while any remain; default: neither (docs/relations.md).
       */
      onDelete?: OnDelete;
    };

/** A to-many relation's rule for deletes (docs/relations.md#deleting). */
export type OnDelete = 'cascade' | 'restrict';

/** The part of a resource that a relation needs of the resource at its other end. */
export interface RelatedEnd {
  readonly name: string;
  readonly key: readonly string[] | null;
  readonly schema?: JsonSchema;
}

/** A declared relation, its other end resolved. */
export interface Relation<R extends RelatedEnd = RelatedEnd> {
  /** As declared: the name embedded values go under. */
  readonly name: string;
  readonly kind: 'one' | 'many';
  /** The resource at the other end. */
  readonly target: R;
  /** To-one: the property here holding the key; to-many: the property there holding it. */
  readonly via: Locator;
  /** The key `via` holds: to-one, the property there; to-many, the property here. */
  readonly references: Locator;
  readonly maxEmbedded: number;
  /** To-many only: what a DELETE here does to the related entities; null: nothing. */
  readonly onDelete: OnDelete | null;
}

const NAME = /^[\p{L}_][\p{L}\p{N}_]*$/u;
const PROPERTY = /^[^./&=<>!,|]+$/;

/**
 * The relations of one resource. Names are matched case-insensitively, as property names
 * are; a relation's name may not be a property the resource declares (an Error at
 * declaration), so a locator that starts with it always means the relation.
 */
export class Relations<R extends RelatedEnd = RelatedEnd> {
  private readonly declared = new Map<string, { name: string; definition: RelationDefinition }>();
  private readonly resolved = new Map<string, Relation<R>>();

  constructor(
    private readonly owner: RelatedEnd,
    definitions: Readonly<Record<string, RelationDefinition>> | undefined,
    private readonly find: (name: string) => R | undefined,
    private readonly maxEmbedded = DEFAULT_MAX_EMBEDDED,
  ) {
    for (const [name, definition] of Object.entries(definitions ?? {})) {
      const at = `Relation '${name}' of '${owner.name}'`;
      if (!NAME.test(name)) throw new Error(`${at}: a relation's name is letters, digits and '_'`);
      if (this.declared.has(name.toLowerCase())) throw new Error(`${at}: another relation has this name`);
      const properties = owner.schema?.properties;
      if (properties && findKey(properties, name) !== undefined)
        throw new Error(`${at}: '${name}' is a property of '${owner.name}'; a relation needs a name of its own`);
      checkDefinition(at, definition);
      this.declared.set(name.toLowerCase(), { name, definition });
    }
  }

  get size(): number {
    return this.declared.size;
  }

  /** The declared names, as declared. */
  names(): string[] {
    return [...this.declared.values()].map((d) => d.name);
  }

  /** Whether a locator (or name) starts with a relation's name. */
  has(name: string): boolean {
    return this.declared.has(name.toLowerCase());
  }

  /** The relation named so (any case); undefined when there is none. Throws an Error when its other end is not there. */
  get(name: string): Relation<R> | undefined {
    const lower = name.toLowerCase();
    const known = this.resolved.get(lower);
    if (known !== undefined) return known;
    const declared = this.declared.get(lower);
    if (declared === undefined) return undefined;
    const relation = this.resolve(declared.name, declared.definition);
    this.resolved.set(lower, relation);
    return relation;
  }

  /** Every relation, resolved (an Error names the first whose other end is missing or keyless). */
  all(): Relation<R>[] {
    return this.names().map((n) => this.get(n)!);
  }

  /** The to-many relations that declare onDelete, resolved: what a DELETE here must look at (docs/relations.md#deleting). */
  deleting(): Relation<R>[] {
    return [...this.declared.values()]
      .filter((d) => 'toMany' in d.definition && d.definition.onDelete !== undefined)
      .map((d) => this.get(d.name)!);
  }

  /** The relation of a locator's first segment, when it names one. */
  of(locator: Locator): Relation<R> | undefined {
    return this.declared.size === 0 ? undefined : this.get(locator.segments[0]);
  }

  /** The condition items that read a relation (any alternative whose locator starts with one), and the others. */
  partition(items: readonly ConditionItem[]): { own: ConditionItem[]; through: ConditionItem[] } {
    const own: ConditionItem[] = [];
    const through: ConditionItem[] = [];
    for (const item of items) {
      const alternatives = 'anyOf' in item ? item.anyOf : [item];
      (this.declared.size > 0 && alternatives.some((c) => this.has(c.locator.segments[0])) ? through : own).push(item);
    }
    return { own, through };
  }

  private resolve(name: string, definition: RelationDefinition): Relation<R> {
    const many = 'toMany' in definition;
    const targetName = many ? definition.toMany : definition.toOne;
    const at = `Relation '${name}' of '${this.owner.name}'`;
    const target = this.find(targetName);
    if (target === undefined) throw new Error(`${at}: there is no resource '${targetName}'`);
    // The key the relation points at: the other resource's (to-one) or this one's (to-many).
    const holder = many ? this.owner : target;
    const references = definition.references ?? (holder.key?.length === 1 ? holder.key[0] : undefined);
    if (references === undefined)
      throw new Error(
        `${at}: '${holder.name}' declares ${holder.key === null ? 'no key' : 'a key of several properties'}; give the property the relation refers to as 'references'`,
      );
    return {
      name,
      kind: many ? 'many' : 'one',
      target,
      via: new Locator(definition.via),
      references: new Locator(references),
      maxEmbedded: (many ? definition.maxEmbedded : undefined) ?? this.maxEmbedded,
      onDelete: (many ? definition.onDelete : undefined) ?? null,
    };
  }
}

function checkDefinition(at: string, d: RelationDefinition): void {
  if (d === null || typeof d !== 'object') throw new Error(`${at}: give { toOne: '<resource>', via } or { toMany: '<resource>', via }`);
  const one = 'toOne' in d && typeof d.toOne === 'string' && d.toOne !== '';
  const many = 'toMany' in d && typeof d.toMany === 'string' && d.toMany !== '';
  if (one === many) throw new Error(`${at}: give exactly one of toOne: '<resource>' and toMany: '<resource>'`);
  if (typeof d.via !== 'string' || !PROPERTY.test(d.via))
    throw new Error(`${at}: 'via' names one property (no dots, commas or operator characters); keys of several properties are not related`);
  if (d.references !== undefined && (typeof d.references !== 'string' || !PROPERTY.test(d.references)))
    throw new Error(`${at}: 'references' names one property`);
  if ('toMany' in d) {
    if (d.maxEmbedded !== undefined && !(Number.isInteger(d.maxEmbedded) && d.maxEmbedded >= 0))
      throw new Error(`${at}: maxEmbedded must be a whole number >= 0`);
    if (d.onDelete !== undefined && d.onDelete !== 'cascade' && d.onDelete !== 'restrict')
      throw new Error(`${at}: onDelete is 'cascade' or 'restrict'`);
  } else if ('maxEmbedded' in d) throw new Error(`${at}: maxEmbedded belongs to a toMany relation`);
  else if ('onDelete' in d) throw new Error(`${at}: onDelete belongs to a toMany relation (the entities there that hold this one's key)`);
}

/** 400 for a name in `embed=` that is no relation of the resource. */
export function unknownRelation(resource: string, name: string, relations: Relations): ServiceError {
  const names = relations.names();
  return new ServiceError(
    'InvalidMetaConditionValueType',
    `'${name}' in embed is no relation of '${resource}'${names.length ? `. Relations: ${names.join(', ')}` : ': it declares none (docs/relations.md)'}`,
  );
}
