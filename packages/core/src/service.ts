import { Ajv } from 'ajv';
import { apiKeys, ApiKeys } from './model/api-keys.js';
import { ruleMethod, runAuthenticate, type Authenticate, type Caller, type FetchOptions, type HandleOptions } from './model/caller.js';
import { ERROR_RESOURCE, ErrorRecords, type ErrorRecord } from './admin/error-records.js';
import { Redaction } from './model/redaction.js';
import { adminRules, checkAdminOptions, defaultPrincipalName } from './admin/access.js';
import { ServiceError } from './errors.js';
import { Events, type EventDefinition, type EventListener, type EventPayload } from './webhooks/events.js';
import { isPromise, type Eventually } from './util/eventually.js';
import { RequestContext } from './request/context.js';
import { Cors } from './http/cors.js';
import { fromFetchRequest, toFetchResponse } from './http/fetch.js';
import type { PlainRequest, PlainResponse } from './http/types.js';
import type { RequestObserver, RequestTrace } from './http/observer.js';
import { observed } from './request/observe.js';
import { metricsOf, type Metrics, type MetricsOptions } from './request/metrics.js';
import { MACRO_RESOURCE, Macros } from './admin/macros.js';
import type { LocalRequests } from './outgoing/local-requests.js';
import { errorRecordBounds, resolveOptions, type ResolvedOptions, type ServiceOptions } from './request/options.js';

export type { ServiceOptions };
import { openApiDocument, type OpenApiOptions } from './admin/openapi.js';
import { errorResponse } from './request/error-response.js';
import { LISTING, type PipelineHost } from './request/host.js';
import { localRequests } from './request/local.js';
import { answer } from './request/pipeline.js';
import { Protocols } from './content-types/protocols.js';
import type { Entity } from './query/conditions.js';
import { Resource, ResourceRegistry, type ResourceDefinition } from './model/resources.js';
import { checkBinaryDefinition, type BinaryResourceDefinition } from './model/binary-resources.js';
import { ComputedStorage } from './storage/computed.js';
import { listingDefinition, resourcesFor } from './admin/listing.js';
import { MemoryStorage } from './storage/memory.js';
import type { Storage } from './storage/storage.js';
import { checkStorages, type Readiness } from './storage/readiness.js';
import { MIN_ETAG_SECRET_LENGTH, useEtagSecret } from './storage/version.js';
import { resolveWebhookOptions } from './webhooks/delivery.js';
import { Webhooks } from './webhooks/webhooks.js';
import { EventStreams } from './streams/streams.js';

export class Service {
  readonly options: ResolvedOptions;
  // The service's parts: the request pipeline and the project's tests reach them; an app
  // uses the methods below (docs/in-app.md). `@internal` leaves them out of the published types.
  /** @internal */
  readonly resources = new ResourceRegistry();
  /** @internal */
  readonly protocols = new Protocols();
  /** @internal */
  readonly events = new Events();
  private readonly authenticator?: Authenticate;
  /** What Error records redact; it learns the headers the app's authenticate reads. */
  private readonly redaction: Redaction;
  /** @internal */
  readonly errors: ErrorRecords;
  /** @internal */
  readonly macros: Macros;
  /** @internal */
  readonly webhooks: Webhooks;
  /** @internal */
  readonly streams: EventStreams;
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly closers: Array<() => void | Promise<void>> = [];
  /** Told of client requests and responses (docs/operations.md); empty: answer() skips them. */
  private readonly observers: RequestObserver[] = [];
  private readonly cors?: Cors;
  private readonly etagSecret?: string;
  /** The parts requests run against (request/host.ts). */
  private readonly host: PipelineHost;
  /** Requests the service makes to itself (Source, Destination, webhooks). */
  private readonly local: LocalRequests;

  constructor(options: ServiceOptions = {}) {
    const { apiKeys: keys, etagSecret, ...rest } = options;
    if (options.onRequest !== undefined || options.onResponse !== undefined)
      this.observers.push({ onRequest: options.onRequest, onResponse: options.onResponse });
    this.options = resolveOptions(rest);
    if (etagSecret !== undefined && (typeof etagSecret !== 'string' || etagSecret.length < MIN_ETAG_SECRET_LENGTH))
      throw new Error(`etagSecret must be a string of at least ${MIN_ETAG_SECRET_LENGTH} characters`);
    this.etagSecret = etagSecret;
    if (keys?.length && options.authenticate)
      throw new Error('Give either apiKeys or authenticate (compose apiKeys() into your authenticate to have both)');
    this.authenticator = options.authenticate ?? (keys?.length ? apiKeys(keys) : undefined);
    for (const p of options.protocols ?? []) this.protocols.add(p);
    if (options.cors) this.cors = new Cors(options.cors === true ? {} : options.cors);

    this.addResource(listingDefinition(this, LISTING));
    this.addResource({
      name: 'Service.Admin.Protocol',
      description: 'Protocol providers and their content types',
      methods: ['GET', 'REPORT', 'HEAD'],
      storage: new ComputedStorage(() => this.protocols.entities()),
      events: false,
    });
    const errorStorage = this.adminStorage(ERROR_RESOURCE);
    checkAdminOptions(options.admin);
    this.redaction = new Redaction(options.redact);
    this.errors = new ErrorRecords(
      errorStorage,
      errorRecordBounds(this.options),
      options.admin?.principalName ?? defaultPrincipalName,
      this.redaction,
    );
    this.addBuiltIn<ErrorRecord>({
      name: ERROR_RESOURCE,
      description: 'Records of failed requests',
      methods: ['GET', 'DELETE', 'REPORT', 'HEAD'],
      storage: errorStorage,
      events: false,
    });
    this.macros = new Macros(this.adminStorage(MACRO_RESOURCE), this.protocols, this.resources);
    this.addBuiltIn(this.macros.definition);
    const webhookOptions = resolveWebhookOptions(this.options.webhooks);
    const outgoing = { allowPrivate: this.options.allowPrivateDestinations, timeoutMs: webhookOptions.timeoutMs };
    // Built before the pipeline that answers them: local requests only run once requests do.
    const local: LocalRequests = {
      maxCaused: this.options.maxCausedRequests,
      handle: (...args) => this.local.handle(...args),
      refuse: (...args) => this.local.refuse(...args),
    };
    const headerRequests = { protocols: this.protocols, local, outgoing, maxBodyBytes: this.options.maxBodyBytes };
    this.webhooks = new Webhooks({
      resources: this.resources,
      events: this.events,
      protocols: this.protocols,
      allowPrivateDestinations: this.options.allowPrivateDestinations,
      local,
      outgoing,
      options: webhookOptions,
      storage: (name) => this.adminStorage(name),
    });
    for (const definition of this.webhooks.definitions) this.addBuiltIn(definition);
    this.onClose(() => this.webhooks.close());
    this.streams = new EventStreams(this.events, this.options.streams);
    this.onClose(() => this.streams.close());
    this.host = {
      resources: this.resources,
      events: this.events,
      streams: this.streams,
      protocols: this.protocols,
      macros: this.macros,
      errors: this.errors,
      headerRequests,
      options: this.options,
      authenticate: (ctx) => this.authenticate(ctx),
      authorize: (caller, resource, method) => this.authorize(caller, resource, method),
      openapi: (options, caller) => this.openapi(options, caller),
    };
    this.local = localRequests(this.host);
  }

  /** Storage for a built-in admin resource. */
  adminStorage(name: string): Storage {
    return this.options.adminStorage?.(name) ?? new MemoryStorage();
  }

  /**
   * Declares an entity resource. Its change events are declared with it when it raises
   * them. The entity type comes from `schema` (a Standard Schema validator, or
   * `jsonSchema({...})`) or is given: `addResource<Order>({...})`.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context and principal
  addResource<T extends object = Entity, O extends object = T, C = any, P = any>(definition: ResourceDefinition<T, O, C, P>): Resource {
    const resource = new Resource(definition, {
      events: this.options.events,
      ajv: this.ajv,
      compiledQueries: this.options.compiledQueries,
      find: (name) => this.resources.find(name),
      maxEmbedded: this.options.maxEmbedded,
    });
    if (this.etagSecret !== undefined) useEtagSecret(resource.storage, this.etagSecret);
    this.resources.add(resource);
    for (const kind of resource.changeEvents)
      this.defineEvent(`${resource.name}.${kind}`, {
        description: `Raised when ${resource.name} entities are ${kind.toLowerCase()}; the payload is those entities`,
        schema: resource.schema,
      });
    return resource;
  }

  /**
   * Declares a binary resource (docs/binary-resources.md): `read(request, caller)` makes
   * the bytes of a GET (a report, a chart), given the URI's conditions; served with
   * `contentType` whatever `Accept` asks, GET and HEAD only.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context and principal
  addBinaryResource<C = any, P = any>(definition: BinaryResourceDefinition<C, P>): Resource {
    checkBinaryDefinition(definition);
    const resource = new Resource(
      { name: definition.name, description: definition.description, rules: definition.rules, events: false },
      { events: false, ajv: this.ajv, binary: definition as BinaryResourceDefinition },
    );
    this.resources.add(resource);
    return resource;
  }

  /** A built-in admin resource, with the rules `admin` gives it (admin/access.ts). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the admin resources' own entity types
  private addBuiltIn<T extends object, O extends object = T>(definition: ResourceDefinition<T, O, any, any>): void {
    const rules = adminRules(definition.name, this.options.admin, this.options.authenticate !== undefined);
    this.addResource(rules === undefined ? definition : { ...definition, rules: rules as ResourceDefinition<T, O>['rules'] });
  }

  /** Declares an event resource; `contentType` makes it a binary event. */
  defineEvent(name: string, definition: EventDefinition = {}): void {
    this.resources.add(
      new Resource(
        { name, description: definition.description ?? `Event ${name}` },
        { kind: 'EventResource', events: false, ajv: this.ajv },
      ),
    );
    this.events.define(name, definition);
  }

  /**
   * Calls `listener` with every event raised (docs/events.md); returns the function that
   * unsubscribes it. A listener's failure never fails the change that raised the event.
   */
  subscribe(listener: EventListener): () => void {
    return this.events.subscribe(listener);
  }

  /** Resolves once no webhook delivery is due, running or waiting for a retry (docs/webhooks.md). */
  idle(): Promise<void> {
    return this.webhooks.idle();
  }

  /** Raises an event; resolves once its webhook deliveries are recorded. */
  raise(name: string, payload: EventPayload): Promise<void> {
    return this.events.raise(name, payload);
  }

  /** The core contract: a plain request (and the app's context) in, a plain response out. */
  handle(request: PlainRequest, options?: HandleOptions): Promise<PlainResponse> {
    const response = this.answer(request, options);
    return isPromise(response) ? response : Promise.resolve(response);
  }

  /**
   * `handle`'s answer, given at once when no step of the request waits (a GET from the
   * memory storage with no async authenticator or hook), else a promise of it. For
   * adapters: a response written in the turn the request came costs no promise hops.
   */
  answer(request: PlainRequest, options?: HandleOptions): Eventually<PlainResponse> {
    const context = options?.context;
    if (this.observers.length === 0) return this.answerTraced(request, context, undefined);
    return observed(this.observers, request, context, (trace) => this.answerTraced(request, context, trace));
  }

  private answerTraced(request: PlainRequest, context: unknown, trace: RequestTrace | undefined): Eventually<PlainResponse> {
    if (this.cors === undefined) return answer(this.host, request, 0, context, undefined, trace);
    return this.cors.handle(
      request,
      () => Promise.resolve(answer(this.host, request, 0, context, undefined, trace)),
      (error) => errorResponse(this.host, new RequestContext(request, this.options.maxBodyBytes, 0, context), error),
    );
  }

  /**
   * Adds an observer told of every client request and its response (docs/operations.md),
   * after the `onRequest`/`onResponse` options; returns a function that removes it.
   */
  observe<S>(observer: RequestObserver<S>): () => void {
    this.observers.push(observer);
    return () => {
      const i = this.observers.indexOf(observer);
      if (i >= 0) this.observers.splice(i, 1);
    };
  }

  /**
   * 403 when the caller may not use the method on the resource: an API key's allow rules,
   * then the resource's own `rules.allow`.
   */
  authorize(caller: Caller, resourceName: string, method: string): void {
    ApiKeys.authorize(caller.principal, resourceName, method);
    const resource = this.resources.find(resourceName);
    if (resource !== undefined && !resource.permits(caller, ruleMethod(method)))
      throw new ServiceError('Forbidden', `You may not use ${method} on '${resource.name}'`);
  }

  /** Whether the caller may use the method on the resource: what `authorize` checks, without the 403. */
  may(caller: Caller, resourceName: string, method: string): boolean {
    if (!ApiKeys.allows(caller.principal, resourceName, method)) return false;
    const resource = this.resources.find(resourceName);
    return resource === undefined || resource.permits(caller, ruleMethod(method));
  }

  /** Whether requests must authenticate (API keys or an app authenticator). */
  get authenticates(): boolean {
    return this.authenticator !== undefined;
  }

  /** The caller's principal (undefined when the service has no authentication); throws 401. */
  authenticate(ctx: RequestContext): unknown {
    if (this.authenticator === undefined) return undefined;
    // The headers the app's own authenticate reads carry who the caller is: Error records redact them.
    const headers = this.options.authenticate === undefined ? ctx.clientHeaders : this.watched(ctx.clientHeaders);
    return runAuthenticate(this.authenticator, { method: ctx.method, uri: ctx.uri, headers }, ctx.context);
  }

  /** Headers whose reads by name are learned by the redaction. */
  private watched(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
    const redaction = this.redaction;
    return new Proxy(headers, {
      get(target, name, receiver) {
        if (typeof name === 'string') redaction.learn(name.toLowerCase());
        return Reflect.get(target, name, receiver) as unknown;
      },
    });
  }

  /**
   * The same contract over Fetch API objects, for Hono, Next.js route handlers, Bun, Deno
   * and workers (docs/adapters/fetch.md): `basePath` is cut off the URL's path, `context`
   * is the app's per-request context as in `handle`.
   */
  async fetch(request: Request, options: FetchOptions = {}): Promise<Response> {
    const plain = fromFetchRequest(request, options.basePath);
    if (plain === undefined) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain' } });
    return toFetchResponse(await this.handle(plain, { context: options.context }));
  }

  /**
   * The OpenAPI 3.1 document describing this service's resources, events and errors; with a
   * caller, only the resources and methods that caller may use (what `GET /` answers).
   */
  openapi(options: OpenApiOptions = {}, caller?: Caller): Record<string, unknown> {
    const resources = caller === undefined ? undefined : resourcesFor(this, caller);
    return openApiDocument(this, options, resources);
  }

  /**
   * Readiness for a load balancer: whether every storage can serve now (SQL: the database
   * answers), each checked within `timeoutMs` (default 5 s). Liveness needs no check:
   * a process that answers at all is alive. See docs/deployment.md.
   */
  ready(options: { timeoutMs?: number } = {}): Promise<Readiness> {
    return checkStorages(this.resources.all(), options.timeoutMs);
  }

  /** Registers cleanup to run on close (timers, workers). */
  onClose(fn: () => void | Promise<void>): void {
    this.closers.push(fn);
  }

  async close(): Promise<void> {
    for (const fn of this.closers.splice(0)) await fn();
  }
}

export function createService(options: ServiceOptions = {}): Service {
  return new Service(options);
}

/**
 * Prometheus-style metrics of a service, counted from now on (docs/operations.md#metrics):
 * `await metrics.text()` is the text exposition format, to serve with `metrics.contentType`.
 */
export function createMetrics(service: Service, options?: MetricsOptions): Metrics {
  return metricsOf(
    {
      observe: (observer) => service.observe(observer),
      outboxDepth: () => service.webhooks.outbox.depth(),
      deliveries: () => service.webhooks.deliveries,
      subscribers: () => service.streams.opened(),
    },
    options,
  );
}
