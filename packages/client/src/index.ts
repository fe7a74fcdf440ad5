/**
 * @resourcery/client: a small fetch-based client for Resourcery services, for browsers and
 * Node 20+. Queries are immutable builders that produce safe URIs (see uri.ts); results
 * are typed by the entity type given to `resource<T>()`.
 */
import { subscribe, type StreamEvent, type SubscribeOptions } from './subscribe.js';
import type { Entity, WriteOptions, WriteResult } from './results.js';
import type { None, RelationMap, ResourceMap, TypedClient } from './typed.js';
import { buildUri, encodeCondition, encodeKey, encodeLocator, encodePart, type Operator, type Value } from './uri.js';

export type { StreamEvent, SubscribeOptions } from './subscribe.js';
export type { Entity, WriteOptions, WriteResult } from './results.js';
export type {
  At,
  ChangeEventName,
  EmbeddedOf,
  Equalities,
  Locator,
  None,
  RelationMap,
  RelationType,
  Renamed,
  ResourceMap,
  ResourcesOf,
  Selected,
  TypedClient,
  TypedQuery,
  ValueOf,
} from './typed.js';
export { pathSerializer } from './path-serializer.js';

export {
  encodePart,
  encodeValue,
  encodeLocator,
  encodeCondition,
  buildUri,
  OPERATORS,
  type Operator,
  type Value,
  type Condition,
} from './uri.js';

export interface ClientOptions {
  /** The service's URL, with its base path: `http://localhost:3000` or `https://example.com/api`. */
  baseUrl: string;
  /** Sent as `Authorization: apikey KEY`. */
  apiKey?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

/** The error body of a failed request, thrown as a value with its status and code. */
export class ResourceryError extends Error {
  readonly status: number;
  readonly code: string;
  /** URI of the stored Error record (the `ErrorInfo` header), when there is one. */
  readonly moreInfoAt?: string;
  readonly body: unknown;

  constructor(status: number, body: unknown, errorInfo: string | null) {
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const text = (name: string) => (typeof fields[name] === 'string' ? fields[name] : undefined);
    super(text('Message') ?? `HTTP ${status}`);
    this.name = 'ResourceryError';
    this.status = status;
    this.code = text('ErrorCode') ?? (status === 412 ? 'PreconditionFailed' : 'Unknown');
    this.moreInfoAt = text('MoreInfoAt') ?? errorInfo ?? undefined;
    this.body = body;
  }
}

interface State {
  resource: string;
  macro: boolean;
  view?: string;
  conditions: string[];
  meta: Map<string, string>;
}

const JSON_RAW = 'application/json;raw=true';

/** A query on one resource (or macro). Every method returns a new query; `uri()` shows it. */
export class Query<T = Entity> {
  constructor(
    private readonly client: Client,
    private readonly state: State,
  ) {}

  private with(change: Partial<State>): Query<T> {
    return new Query<T>(this.client, { ...this.state, ...change });
  }

  private withMeta(name: string, value: string): Query<T> {
    const meta = new Map(this.state.meta);
    meta.delete(name);
    meta.set(name, value);
    return this.with({ meta });
  }

  /**
   * `where('Age', '>', 30)`, or `where({ Name: 'Ann', City: null })` for equality. A list
   * of values is any of them: `where('Status', '=', ['open', 'pending'])`.
   */
  where(property: string, operator: Operator, value: Value | readonly Value[]): Query<T>;
  where(equal: Partial<Record<keyof T & string, Value | readonly Value[]>> | Record<string, Value | readonly Value[]>): Query<T>;
  where(a: string | Record<string, Value | readonly Value[] | undefined>, operator?: Operator, value?: Value | readonly Value[]): Query<T> {
    const added =
      typeof a === 'string'
        ? [encodeCondition({ property: a, operator: operator!, value: value === undefined ? null : value })]
        : Object.entries(a).map(([property, v]) => encodeCondition({ property, operator: '=', value: v === undefined ? null : v }));
    return this.with({ conditions: [...this.state.conditions, ...added] });
  }

  /**
   * The entity with this key (`/Person/7`), for resources that declare a key; a composite
   * key takes its values in the declared order (`key('B', 3)` is `/Order/B,3`).
   */
  key(...values: Array<string | number>): Query<T> {
    if (values.length === 0) throw new TypeError('key() needs the key value (or the values of a composite key)');
    return this.with({ conditions: [values.map(encodeKey).join(',')] });
  }

  view(name: string): Query<T> {
    return this.with({ view: name });
  }

  /**
   * Sorts ascending by these properties, each breaking the ties of the ones before
   * (`order_asc=LastName,FirstName`). With orderDesc too, the one called first is the
   * primary order: `orderDesc('Age').orderAsc('Name')` is `order_desc=Age&order_asc=Name`.
   * Calling it again replaces its properties (and makes them come after orderDesc's).
   */
  orderAsc(...properties: Array<(keyof T & string) | string>): Query<T> {
    return this.withMeta('order_asc', orderKeys(properties));
  }

  /** Sorts descending by these properties; see orderAsc for how the two combine. */
  orderDesc(...properties: Array<(keyof T & string) | string>): Query<T> {
    return this.withMeta('order_desc', orderKeys(properties));
  }

  limit(n: number): Query<T> {
    return this.withMeta('limit', String(Math.trunc(n)));
  }

  offset(n: number): Query<T> {
    return this.withMeta('offset', String(Math.trunc(n)));
  }

  select(...properties: Array<(keyof T & string) | string>): Query<T> {
    return this.withMeta('select', properties.map(encodeLocator).join(','));
  }

  add(...properties: string[]): Query<T> {
    return this.withMeta('add', properties.map(encodeLocator).join(','));
  }

  rename(pairs: Record<string, string>): Query<T> {
    return this.withMeta(
      'rename',
      Object.entries(pairs)
        .map(([from, to]) => `${encodeLocator(from)}${encodePart('->')}${encodePart(to)}`)
        .join(','),
    );
  }

  /**
   * Puts the entities of these relations under their names (`embed=Customer,Orders`): a
   * to-one relation's entity or null, a to-many relation's array (docs/client.md, "Relations").
   */
  embed(...relations: string[]): Query<T> {
    if (relations.length === 0) throw new TypeError('embed() needs at least one relation');
    return this.withMeta('embed', relations.map(encodePart).join(','));
  }

  distinct(on = true): Query<T> {
    return this.withMeta('distinct', String(on));
  }

  search(text: string): Query<T> {
    return this.withMeta('search', encodePart(text));
  }

  searchRegex(pattern: string | RegExp): Query<T> {
    return this.withMeta('search_regex', encodePart(typeof pattern === 'string' ? pattern : pattern.source));
  }

  /** Lets PATCH and DELETE change more than one entity. */
  unsafe(on = true): Query<T> {
    return this.withMeta('unsafe', String(on));
  }

  /** POST updates the entities that match on these properties instead of inserting them. */
  safepost(...properties: string[]): Query<T> {
    return this.withMeta('safepost', properties.map(encodeLocator).join(','));
  }

  /** The URI of this query, relative to the service's base URL. */
  uri(): string {
    return buildUri({
      resource: this.state.resource,
      macro: this.state.macro,
      view: this.state.view,
      conditions: this.state.conditions,
      meta: [...this.state.meta].map(([k, v]) => `${k}=${v}`),
    });
  }

  /** The matching entities ([] when none). */
  async get(): Promise<T[]> {
    const res = await this.client.send('GET', this.uri(), { accept: JSON_RAW });
    return res.status === 204 ? [] : ((await res.json()) as T[]);
  }

  async first(): Promise<T | undefined> {
    return (await this.limit(1).get())[0];
  }

  /** One entity and its ETag; with `ifNoneMatch`, `notModified` is true on 304. */
  async one(options: { ifNoneMatch?: string } = {}): Promise<{ entity?: T; etag?: string; notModified: boolean }> {
    const res = await this.client.send('GET', this.uri(), {
      accept: JSON_RAW,
      ...(options.ifNoneMatch ? { 'if-none-match': options.ifNoneMatch } : {}),
    });
    if (res.status === 304) return { etag: options.ifNoneMatch, notModified: true };
    const data = res.status === 204 ? [] : ((await res.json()) as T[]);
    return { entity: data[0], etag: res.headers.get('etag') ?? undefined, notModified: false };
  }

  /** How many entities GET would return (REPORT). */
  async count(): Promise<number> {
    const res = await this.client.send('REPORT', this.uri(), { accept: JSON_RAW });
    return (await res.json()) as number;
  }

  /** Whether any entity matches (HEAD). */
  async exists(): Promise<boolean> {
    return (await this.client.send('HEAD', this.uri(), {})).status === 200;
  }

  post(entities: Partial<T> | Array<Partial<T>>): Promise<WriteResult<T>> {
    return this.write('POST', entities);
  }

  put(entity: Partial<T>, options: WriteOptions = {}): Promise<WriteResult<T>> {
    return this.write('PUT', entity, options);
  }

  patch(changes: Partial<T>, options: WriteOptions = {}): Promise<WriteResult<T>> {
    return this.write('PATCH', changes, options);
  }

  delete(options: WriteOptions = {}): Promise<WriteResult<T>> {
    return this.write('DELETE', undefined, options);
  }

  /** The raw response in another content type (Excel, JSON Lines...), e.g. for a download. */
  as(accept: string): Promise<Response> {
    return this.client.send('GET', this.uri(), { accept });
  }

  private async write(method: string, body: unknown, options: WriteOptions = {}): Promise<WriteResult<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (options.ifMatch) headers['if-match'] = options.ifMatch;
    const res = await this.client.send(method, this.uri(), headers, body === undefined ? undefined : JSON.stringify(body));
    const envelope = (res.status === 204 ? {} : await res.json()) as {
      Data?: T[];
      InsertedCount?: number;
      UpdatedCount?: number;
      DeletedCount?: number;
    };
    return {
      status: res.status,
      data: envelope.Data ?? [],
      inserted: envelope.InsertedCount ?? 0,
      updated: envelope.UpdatedCount ?? 0,
      deleted: envelope.DeletedCount ?? 0,
      etag: res.headers.get('etag') ?? undefined,
    };
  }
}

export class Client {
  private readonly base: string;
  private readonly doFetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** A query on a resource; `T` types its entities (e.g. from openapi-typescript's `components['schemas']`). */
  resource<T = Entity>(name: string): Query<T> {
    return new Query<T>(this, { resource: name, macro: false, conditions: [], meta: new Map() });
  }

  /** A query through a macro (`/$name`); its own conditions and meta-conditions apply first. */
  macro<T = Entity>(name: string): Query<T> {
    return new Query<T>(this, { resource: name, macro: true, conditions: [], meta: new Map() });
  }

  /** The OpenAPI 3.1 document of the service. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document is JSON of any shape
  async openapi(): Promise<Record<string, any>> {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document is JSON of any shape
    return (await (await this.send('GET', '/', { accept: 'application/openapi+json' })).json()) as Record<string, any>;
  }

  /**
   * The events an event selector (`'/Person.Inserted/Age>30'`, or a query on the event:
   * `api.resource('Person.Inserted').where('Age', '>', 30)`) matches, as they are raised,
   * until `signal` aborts; reconnects with Last-Event-ID after a failure. Rejects on a
   * refusal that retrying cannot change (400, 401, 403, 404).
   */
  subscribe<D = Entity[]>(
    selector: string | { uri(): string },
    onEvent: (event: StreamEvent<D>) => void,
    options: SubscribeOptions = {},
  ): Promise<void> {
    const uri = typeof selector === 'string' ? (selector.startsWith('/') ? selector : `/${selector}`) : selector.uri();
    return subscribe<D>((u, headers, signal) => this.send('GET', u, headers, undefined, signal), uri, onEvent, options);
  }

  /** One request to a service URI; a failure (status >= 400) is thrown as a ResourceryError. */
  async send(method: string, uri: string, headers: Record<string, string>, body?: string, signal?: AbortSignal): Promise<Response> {
    const all: Record<string, string> = { ...this.options.headers, ...headers };
    if (this.options.apiKey) all.authorization = `apikey ${this.options.apiKey}`;
    // Alternatives (`|`): Chromium sends `|` as `%7C`, a literal `|` for the service; the URI
    // as written goes along so the service still reads them as OR (docs/uri.md#browsers).
    if (uri.includes('|')) all['x-resourcery-uri'] = uri;
    const res = await this.doFetch(this.base + uri, { method, headers: all, body, signal });
    if (res.status >= 400) {
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = text;
      }
      throw new ResourceryError(res.status, parsed, res.headers.get('errorinfo'));
    }
    return res;
  }
}

/**
 * A client. Untyped, `createClient(options)`: give entity types per query
 * (`resource<Person>('Person')`). Typed, `createClient<Resources, Relations>(options)` with
 * a map of resource names to entity types (written by the app, or `ResourcesOf<paths>` from
 * the OpenAPI document's generated types) and optionally their relations: names,
 * properties and condition values are checked at compile time (docs/client.md).
 */
export function createClient(options: ClientOptions): Client;
export function createClient<M extends ResourceMap, Rel extends RelationMap<M> = None>(options: ClientOptions): TypedClient<M, Rel>;
export function createClient(options: ClientOptions): unknown {
  return new Client(options);
}

function orderKeys(properties: readonly string[]): string {
  if (properties.length === 0) throw new TypeError('An order needs at least one property');
  return properties.map(encodeLocator).join(',');
}
