import { ruleMethod, type Caller } from './caller.js';
import { checkNesting } from './content-types/nesting.js';
import { ERROR_RESOURCE, errorBody, type ErrorRecords } from './error-records.js';
import { ServiceError, toServiceError } from './errors.js';
import { isPromise, type Eventually } from './eventually.js';
import type { Events } from './events.js';
import { parseUri, type ParsedUri } from './grammar/parse.js';
import { RequestContext } from './http/context.js';
import { checkRead, writeConditions } from './http/preconditions.js';
import { respond } from './http/respond.js';
import type { PlainRequest, PlainResponse } from './http/types.js';
import type { LocalRequests } from './local-requests.js';
import type { Macros } from './macros.js';
import type { OperationContext } from './operation-context.js';
import { OPERATIONS } from './operations.js';
import { Origin } from './origin.js';
import { rootResponse, type RootHost } from './root.js';
import type { Negotiated } from './protocols.js';
import type { Entity } from './query/conditions.js';
import type { CompiledQuery } from './query/evaluate.js';
import type { Resource, ResourceRegistry } from './resources.js';
import type { Result } from './results.js';
import type { RowRule } from './rules.js';
import { readSource, sendToDestination, type HeaderRequestDeps } from './source-destination.js';

export const LISTING = 'Service.AvailableResource';

/** Local requests (macros, webhooks, Source) may nest this deep before a loop is assumed. */
export const MAX_DEPTH = 16;

/** What `onError` learns besides the error. */
export interface ErrorInfo {
  method: string;
  uri: string;
  /** The caller's context and principal (the principal is undefined when authentication failed). */
  caller: Caller;
  /** The thrown value before it became a ServiceError (its stack). */
  cause: unknown;
}

/** What the pipeline runs requests against: parts the service (the composition root) wires, never the service itself. */
export interface PipelineHost extends RootHost {
  readonly resources: ResourceRegistry;
  readonly events: Events;
  readonly macros: Macros;
  readonly errors: ErrorRecords;
  /** Source and Destination headers. */
  readonly headerRequests: HeaderRequestDeps;
  readonly options: {
    readonly maxBodyBytes: number;
    readonly maxNestingDepth: number;
    readonly searchBudget: number;
    readonly maxCausedRequests: number;
    readonly onError?: (error: ServiceError, info: ErrorInfo) => void;
  };
  /** 403 when the caller may not use the method on the resource. */
  authorize(caller: Caller, resource: string, method: string): void;
}

/**
 * The request pipeline, in order:
 * auth -> parse -> macro rewrite -> resolve resource -> operation (reading the body)
 * -> write result. Every failure is a ServiceError turned into a response in one place.
 */
export function handle(
  service: PipelineHost,
  request: PlainRequest,
  depth = 0,
  context?: unknown,
  origin?: Origin,
): Promise<PlainResponse> {
  const response = answer(service, request, depth, context, origin);
  return isPromise(response) ? response : Promise.resolve(response);
}

/**
 * `handle`, answered in the caller's turn when no step waits (no async authenticator,
 * macro or hook, a storage that answers at once: a GET from the memory storage), else a
 * promise. Each step runs the next at once when it has its value: the same steps in the
 * same order either way, only without the promise hops (docs/performance.md).
 */
export function answer(
  service: PipelineHost,
  request: PlainRequest,
  depth = 0,
  context?: unknown,
  origin?: Origin,
): Eventually<PlainResponse> {
  const ctx = new RequestContext(request, service.options.maxBodyBytes, depth, context, origin);
  try {
    const described = rootResponse(service, ctx);
    // A failure (401) is answered as any other.
    if (described !== undefined) return isPromise(described) ? answered(service, ctx, described) : described;
    const principal = service.authenticate(ctx);
    const response = principal instanceof Promise ? authenticatedLater(service, ctx, principal) : authenticated(service, ctx, principal);
    return isPromise(response) ? answered(service, ctx, response) : response;
  } catch (e) {
    return errorResponse(service, ctx, e);
  }
}

// The steps' continuations through promises are functions of their own (here and below):
// a closure in a step would cost every request an allocation, waiting or not.

/** The response a step will give, or the error response if it fails. */
async function answered(service: PipelineHost, ctx: RequestContext, response: PromiseLike<PlainResponse>): Promise<PlainResponse> {
  try {
    return await response;
  } catch (e) {
    return errorResponse(service, ctx, e);
  }
}

async function authenticatedLater(service: PipelineHost, ctx: RequestContext, principal: Promise<unknown>): Promise<PlainResponse> {
  return authenticated(service, ctx, await principal);
}

function authenticated(service: PipelineHost, ctx: RequestContext, principal: unknown): Eventually<PlainResponse> {
  ctx.principal = principal;
  const parsed = parseUri(ctx.uri);
  return parsed.macro ? rewritten(service, ctx, parsed) : run(service, ctx, parsed);
}

async function rewritten(service: PipelineHost, ctx: RequestContext, parsed: ParsedUri): Promise<PlainResponse> {
  return run(service, ctx, await service.macros.rewrite(parsed, ctx));
}

/** The operation on the resolved resource, then its result written (or sent to a Destination). */
function run(service: PipelineHost, ctx: RequestContext, parsed: ParsedUri): Eventually<PlainResponse> {
  const resource = service.resources.resolve(parsed.resource === '' ? LISTING : parsed.resource);
  ctx.resource = resource;
  // A bare value (`/posts/1`) is no error for a resource with a key.
  if (parsed.error && !(parsed.bare !== undefined && resource.key)) throw parsed.error;
  const caller: Caller = { context: ctx.context, principal: ctx.principal, method: ctx.method };
  service.authorize(caller, resource.name, ctx.method);
  const operation = OPERATIONS[ctx.method];
  if (!operation || !resource.allows(ctx.method)) {
    throw new ServiceError('MethodNotAllowed', `${ctx.method} is not allowed on '${resource.name}'`, {
      headers: { allow: resource.methods.join(', ') },
    });
  }
  const rows = resource.rows(caller, ruleMethod(ctx.method));
  const query = resource.query(parsed, rows);
  const output = service.protocols.forAccept(ctx.header('accept'));
  const result = operation(new Operating(service, ctx, resource, query, caller, rows, output));
  return isPromise(result) ? finishLater(service, ctx, resource, output, result) : finish(service, ctx, resource, output, result);
}

async function finishLater(
  service: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  output: Negotiated,
  result: PromiseLike<Result>,
): Promise<PlainResponse> {
  return finish(service, ctx, resource, output, await result);
}

function finish(
  service: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  output: Negotiated,
  result: Result,
): Eventually<PlainResponse> {
  const destination = ctx.method === 'GET' ? ctx.header('destination') : undefined;
  if (destination !== undefined) return sent(ctx, resource, output, sendToDestination(service.headerRequests, ctx, result, destination));
  if (result.kind === 'stream') result = { kind: 'stream', entities: reported(service, ctx, result.entities) };
  return checkRead(ctx, result) ?? respond(ctx, resource, output, result);
}

/**
 * A stream's entities, a failure while they are read reported as any other (onError, an
 * Error record) before it cuts the body short: the status went out, the error must not be lost.
 */
async function* reported(service: PipelineHost, ctx: RequestContext, entities: AsyncIterable<Entity>): AsyncGenerator<Entity> {
  try {
    yield* entities;
  } catch (e) {
    await errorResponse(service, ctx, e);
    throw e;
  }
}

async function sent(ctx: RequestContext, resource: Resource, output: Negotiated, result: Promise<Result>): Promise<PlainResponse> {
  return respond(ctx, resource, output, await result);
}

/**
 * What an operation gets of its request: one object, its body read and its events raised
 * only when the operation asks (a GET does neither, so it makes no closures for them).
 */
class Operating implements OperationContext {
  readonly searchBudget: number;
  readonly ifMatch?: string[];
  readonly ifNoneMatch?: string[];
  private reading: Promise<Entity[]> | undefined;
  private authorizing: ((resource: string, method: string) => void) | undefined;

  constructor(
    private readonly service: PipelineHost,
    private readonly ctx: RequestContext,
    readonly resource: Resource,
    readonly query: CompiledQuery,
    readonly caller: Caller,
    readonly rows: RowRule | null,
    private readonly output: Negotiated,
  ) {
    this.searchBudget = service.options.searchBudget;
    const conditions = writeConditions(ctx);
    this.ifMatch = conditions.ifMatch;
    this.ifNoneMatch = conditions.ifNoneMatch;
  }

  /** Whether a GET's answer is written one entity at a time (SelectQuery.stream); read by GET only. */
  get stream(): boolean {
    return this.ctx.method === 'GET' && this.output.contentType.streams === true && streamable(this.ctx);
  }

  /** The caller's rights on another resource; a function of its own, as hooks get it (`beforeWrite`). */
  get authorize(): (resource: string, method: string) => void {
    return (this.authorizing ??= (resource, method) => this.service.authorize(this.caller, resource, method));
  }

  /** Read once: a retried operation (Conflict) or a Source GET must not run twice. */
  input(): Promise<Entity[]> {
    return (this.reading ??= readInput(this.service, this.ctx));
  }

  changed(kind: 'Inserted' | 'Updated' | 'Deleted', entities: Entity[]): Promise<void> {
    return changed(this.service, this.resource, kind, entities, this.ctx);
  }
}

/**
 * Local requests through this pipeline, one level deeper each: on the caller's behalf
 * (Source, Destination) with the caller's context; webhook deliveries pass none. Each
 * counts against its origin's bound: past it, the answer is 508 (see `refuse`).
 */
export function localRequests(host: PipelineHost): LocalRequests {
  const local: LocalRequests = {
    maxCaused: host.options.maxCausedRequests,
    handle(request, depth, context, origin = new Origin()) {
      if (depth > MAX_DEPTH)
        return Promise.reject(new ServiceError('InfiniteLoopDetected', `Local requests nested more than ${MAX_DEPTH} deep`));
      if (!origin.take(host.options.maxCausedRequests)) return refuse(host, request, origin, depth, context);
      return handle(host, request, depth, context, origin);
    },
    refuse: (request, origin, depth, error) => refuse(host, request, origin, depth, undefined, error),
  };
  return local;
}

/**
 * The answer to a request one origin caused past `maxCausedRequests` (or, given, past
 * another loop limit): 508 InfiniteLoopDetected. Only the first refusal of an origin makes
 * an Error record (and tells onError); later ones link to it, so a runaway loop cannot
 * flush the records.
 */
async function refuse(
  host: PipelineHost,
  request: PlainRequest,
  origin: Origin,
  depth: number,
  context?: unknown,
  error = new ServiceError(
    'InfiniteLoopDetected',
    `One client request caused more than ${host.options.maxCausedRequests} local requests and webhook deliveries (${origin.id}): the rest are stopped (service option maxCausedRequests)`,
  ),
): Promise<PlainResponse> {
  const ctx = new RequestContext(request, host.options.maxBodyBytes, depth, context, origin);
  if (origin.refusal !== undefined) return errorResponse(host, ctx, error, origin.refusal);
  let link!: (value: string | undefined) => void;
  origin.refusal = new Promise((resolve) => (link = resolve));
  const response = await errorResponse(host, ctx, error);
  link(response.headers.errorinfo);
  return response;
}

/** The entities a POST/PUT/PATCH writes: from the body (or the Source header). */
async function readInput(host: PipelineHost, ctx: RequestContext): Promise<Entity[]> {
  const entities = await readEntities(host, ctx);
  // Before anything walks them: deeper input would overflow recursive code (stringify, copies).
  checkNesting(entities, host.options.maxNestingDepth);
  return entities;
}

async function readEntities(host: PipelineHost, ctx: RequestContext): Promise<Entity[]> {
  const source = ctx.header('source');
  if (source !== undefined) return readSource(host.headerRequests, ctx, source);
  const body = await ctx.body();
  if (body === null) throw new ServiceError('NoDataSource', `${ctx.method} needs a body (one entity or an array of entities)`);
  const { contentType, params } = host.protocols.forContentType(ctx.header('content-type'));
  return contentType.read!(body, { params });
}

/**
 * Turns any failure into the error response of SPEC 7, storing an Error record (not for
 * 401); `recorded`: the link of a record already made for it instead.
 */
export async function errorResponse(
  host: Pick<PipelineHost, 'options' | 'errors'>,
  ctx: RequestContext,
  thrown: unknown,
  recorded?: Promise<string | undefined>,
): Promise<PlainResponse> {
  const error = toServiceError(thrown);
  const { onError } = host.options;
  if (error.status >= 500 && onError && recorded === undefined) {
    try {
      onError(error, {
        method: ctx.method,
        uri: ctx.uri,
        caller: { context: ctx.context, principal: ctx.principal, method: ctx.method },
        cause: thrown,
      });
    } catch {
      // A failing logger must not change the answer.
    }
  }
  let moreInfoAt = await recorded;
  if (recorded === undefined && error.code !== 'NotAuthorized') {
    try {
      moreInfoAt = `${ctx.basePath}/${ERROR_RESOURCE}/id=${await host.errors.record(ctx, error)}`;
    } catch {
      // A failing error store must not hide the original error.
    }
  }
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...error.headers };
  if (moreInfoAt) headers.errorinfo = moreInfoAt;
  // A page's script (the explorer) asks for no Basic challenge: browsers would answer it with a login dialog.
  if (error.code === 'NotAuthorized' && ctx.header('x-requested-with') !== undefined) delete headers['www-authenticate'];
  const body = ctx.method === 'HEAD' ? null : JSON.stringify(errorBody(error, ctx, moreInfoAt));
  return { status: error.status, headers, body };
}

async function changed(service: PipelineHost, resource: Resource, kind: string, entities: Entity[], ctx: RequestContext): Promise<void> {
  if (resource.raisesEvents && entities.length > 0)
    await service.events.raise(
      `${resource.name}.${kind}`,
      entities.map((e) => resource.output(e)),
      { depth: ctx.depth, origin: ctx.origin },
    );
}

/** Whether a GET's answer may be written while the storage still reads it: nothing needs it whole first (a Destination, If-Match, If-None-Match). */
function streamable(ctx: RequestContext): boolean {
  return ctx.header('destination') === undefined && ctx.header('if-match') === undefined && ctx.header('if-none-match') === undefined;
}
