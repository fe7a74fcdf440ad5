/**
 * The typed client (docs/client.md, "A client that checks names"): given a map of the
 * service's resources to their entity types, and optionally their relations, a misspelt
 * resource, property or relation, or a condition value of the wrong type, is a compile
 * error; `select` narrows the result type and `embed` adds the related entities. Types
 * only: the queries are the same objects as the untyped client's (index.ts).
 */
import type { Entity, WriteOptions, WriteResult } from './results.js';
import type { StreamEvent, SubscribeOptions } from './subscribe.js';
import type { Operator, Value } from './uri.js';

/** Resource names to entity types: `{ Person: Person; Order: Order }`, or `ResourcesOf<paths>`. */
export type ResourceMap = { [name: string]: object };

/**
 * A relation as `addResource`'s `relations` declares it (docs/client.md, "Relations"), so the same
 * object can be reused with `typeof`: `{ toOne: 'Person' }` or `{ toMany: 'Order' }`.
 */
export type RelationType<Names extends string = string> = { readonly toOne: Names } | { readonly toMany: Names };

/** For each resource, its relations by name: `{ Order: { Customer: { toOne: 'Person' } } }`. */
export type RelationMap<M extends ResourceMap> = {
  readonly [N in keyof M]?: { readonly [relation: string]: RelationType<keyof M & string> };
};

/**
 * The resources of an OpenAPI document as openapi-typescript generates its `paths`: each
 * `/<Resource>` path whose GET answers entities (`Data`), by resource name, with the
 * entity schema's type. `createClient<ResourcesOf<paths>>(...)`.
 */
export type ResourcesOf<Paths> = {
  [P in keyof Paths as P extends `/${infer N}`
    ? N extends '' | `${string}/${string}`
      ? never
      : EntityAt<Paths[P]> extends never
        ? never
        : N
    : never]: EntityAt<Paths[P]>;
};

type EntityAt<Item> = Item extends { get: { responses: { 200: { content: { 'application/json': { Data?: ReadonlyArray<infer E> } } } } } }
  ? E extends object
    ? E
    : never
  : never;

/** The entities each relation embeds: to-one an entity or null, to-many an array. */
export type EmbeddedOf<M extends ResourceMap, Rel extends RelationMap<M>, N extends keyof M> = Rel[N] extends infer R
  ? R extends { readonly [relation: string]: RelationType }
    ? {
        [K in keyof R & string]: R[K] extends { toMany: infer T }
          ? M[T & keyof M][]
          : R[K] extends { toOne: infer T }
            ? M[T & keyof M] | null
            : never;
      }
    : None
  : None;

type Depth = [never, 0, 1, 2, 3];

/** No relations. */
export type None = Record<never, never>;

/**
 * The property locators of a type: its properties, dotted paths into nested objects
 * (`Address.City`, three levels deep) and `.Length` of strings and arrays (`Name.Length`).
 */
export type Locator<T, D extends number = 3> = [D] extends [never]
  ? never
  : T extends object
    ? { [K in keyof T & string]-?: K | `${K}.${Inner<NonNullable<T[K]>, D>}` }[keyof T & string]
    : never;

type Inner<V, D extends number> = V extends string | readonly unknown[]
  ? 'Length'
  : V extends Date | ((...args: never[]) => unknown)
    ? never
    : V extends object
      ? Locator<V, Depth[D]>
      : never;

/** The type of the value a locator reads (`At<Person, 'Address.City'>`): null where a step may be missing. */
export type At<T, L extends string> = L extends keyof T
  ? T[L]
  : L extends `${infer H}.${infer Rest}`
    ? H extends keyof T
      ? Step<T[H], Rest>
      : never
    : never;

type Step<V, Rest extends string> =
  | (Rest extends 'Length'
      ? NonNullable<V> extends string | readonly unknown[]
        ? number
        : At<NonNullable<V>, Rest>
      : At<NonNullable<V>, Rest>)
  | (null extends V ? null : undefined extends V ? null : never);

/** What a condition on a property of type V compares with: its own type (a string may be a Date), null where it may be missing. */
export type ValueOf<V> = unknown extends V ? Value : Known<V>;

type Known<V> =
  | (V extends string ? V | (string extends V ? Date : never) : V extends number | boolean ? V : V extends Date ? Date | string : never)
  | (null extends V ? null : undefined extends V ? null : never);

/** What conditions read: the entity, and through a relation its related entity (to-many: any of them). */
type Conditioned<E, Emb> = E & { [K in keyof Emb]: NonNullable<Emb[K]> extends ReadonlyArray<infer T> ? T : Emb[K] };

/** `where({ ... })`: equality on any locator, each value of its type or a list of them. */
export type Equalities<C> = { [L in Locator<C>]?: ValueOf<At<C, L>> | readonly ValueOf<At<C, L>>[] };

/** What `select` leaves: the selected properties (a dotted one under its dotted name). */
export type Selected<Row, L extends string> = Simplify<Pick<Row, L & keyof Row> & { [K in Exclude<L, keyof Row>]: At<Row, K> }>;

/** What `rename` leaves: renamed properties under their new names. */
export type Renamed<Row, P> = Simplify<
  Omit<Row, keyof P & keyof Row> & {
    -readonly [K in keyof P as P[K] extends string ? P[K] : never]-?: K extends string ? At<Row, K> : never;
  }
>;

type Simplify<T> = { [K in keyof T]: T[K] };

/**
 * A query of the typed client. `Row` is what a GET answers (narrowed by select, widened by
 * embed and add), `E` the resource's entity type (conditions, writes), `Emb` the entities
 * its relations embed. Every method returns a new query.
 */
export interface TypedQuery<Row extends object, E extends object = Row, Emb extends object = None> {
  /** `where('Age', '>', 30)`; a list is any of the values. A locator may go through a relation (`Customer.Name`). */
  where<L extends Locator<Conditioned<E, Emb>>>(
    property: L,
    operator: Operator,
    value: ValueOf<At<Conditioned<E, Emb>, L>> | readonly ValueOf<At<Conditioned<E, Emb>, L>>[],
  ): TypedQuery<Row, E, Emb>;
  /** Equality: `where({ Name: 'Ann', City: null })`, `where({ Id: [1, 2, 3] })`. */
  where(equal: Equalities<Conditioned<E, Emb>>): TypedQuery<Row, E, Emb>;
  key(...values: Array<string | number>): TypedQuery<Row, E, Emb>;
  /** A view's own meta-conditions (a select of its own, say) are not seen by the types. */
  view(name: string): TypedQuery<Row, E, Emb>;
  orderAsc(...properties: Array<Locator<Row>>): TypedQuery<Row, E, Emb>;
  orderDesc(...properties: Array<Locator<Row>>): TypedQuery<Row, E, Emb>;
  limit(n: number): TypedQuery<Row, E, Emb>;
  offset(n: number): TypedQuery<Row, E, Emb>;
  /** Only these properties: the result type is narrowed to them (a dotted one under its dotted name). */
  select<const L extends Locator<Row>>(...properties: L[]): TypedQuery<Selected<Row, L>, E, Emb>;
  /** Adds computed values under their dotted names (`add('Name.Length')`). */
  add<const L extends Locator<Row>>(...properties: L[]): TypedQuery<Simplify<Row & { [K in L]: At<Row, K> }>, E, Emb>;
  rename<const P extends { [L in Locator<Row>]?: string }>(pairs: P): TypedQuery<Renamed<Row, P>, E, Emb>;
  /** Puts each relation's entities under its name: to-one an entity or null, to-many an array. */
  embed<const N extends keyof Emb & string>(...relations: N[]): TypedQuery<Simplify<Row & Pick<Emb, N>>, E, Emb>;
  distinct(on?: boolean): TypedQuery<Row, E, Emb>;
  search(text: string): TypedQuery<Row, E, Emb>;
  searchRegex(pattern: string | RegExp): TypedQuery<Row, E, Emb>;
  unsafe(on?: boolean): TypedQuery<Row, E, Emb>;
  safepost(...properties: Array<Locator<E>>): TypedQuery<Row, E, Emb>;
  uri(): string;
  get(): Promise<Row[]>;
  first(): Promise<Row | undefined>;
  one(options?: { ifNoneMatch?: string }): Promise<{ entity?: Row; etag?: string; notModified: boolean }>;
  count(): Promise<number>;
  exists(): Promise<boolean>;
  post(entities: Partial<E> | Array<Partial<E>>): Promise<WriteResult<E>>;
  put(entity: Partial<E>, options?: WriteOptions): Promise<WriteResult<E>>;
  patch(changes: Partial<E>, options?: WriteOptions): Promise<WriteResult<E>>;
  delete(options?: WriteOptions): Promise<WriteResult<E>>;
  as(accept: string): Promise<Response>;
}

/** The change events of entity resources, for `subscribe` selectors: `Person.Inserted`. */
export type ChangeEventName<M extends ResourceMap> = `${keyof M & string}.${'Inserted' | 'Updated' | 'Deleted'}`;

type ResourceOfEvent<M extends ResourceMap, N extends string> = N extends `${infer R}.${'Inserted' | 'Updated' | 'Deleted'}`
  ? R extends keyof M
    ? R
    : never
  : never;

/** The client `createClient<Resources, Relations>(...)` returns: the same client, its names checked. */
export interface TypedClient<M extends ResourceMap, Rel extends RelationMap<M> = None> {
  resource<N extends keyof M & string>(name: N): TypedQuery<M[N], M[N], EmbeddedOf<M, Rel, N>>;
  /** A change event, as a selector for `subscribe`: `resource('Person.Inserted').where('Age', '>', 30)`. */
  resource<N extends ChangeEventName<M>>(name: N): TypedQuery<M[ResourceOfEvent<M, N>], M[ResourceOfEvent<M, N>]>;
  /** Macros are saved at run time, so their names are not checked: give the entity type. */
  macro<T extends object = Entity>(name: string): TypedQuery<T>;
  openapi(): Promise<Record<string, unknown>>;
  subscribe<D = Entity[]>(
    selector: string | { uri(): string },
    onEvent: (event: StreamEvent<D>) => void,
    options?: SubscribeOptions,
  ): Promise<void>;
  send(method: string, uri: string, headers: Record<string, string>, body?: string, signal?: AbortSignal): Promise<Response>;
}
