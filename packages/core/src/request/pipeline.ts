import { ServiceError } from '../errors.js';
import { parseUri, type ParsedUri } from '../grammar/parse.js';
import type { PlainRequest, PlainResponse } from '../http/types.js';
import type { RequestTrace } from '../http/observer.js';
import { ruleMethod, type Caller } from '../model/caller.js';
import type { Resource } from '../model/resources.js';
import type { Negotiated } from '../content-types/protocols.js';
import type { Result } from '../operations/results.js';
import { OPERATIONS } from '../operations/write.js';
import { budgetsOf } from '../operations/plan.js';
import { selectOutput } from '../operations/read.js';
import { resolveQuery } from '../operations/related.js';
import type { RowRule } from '../model/rules.js';
import type { CompiledQuery } from '../query/evaluate.js';
import type { Origin } from '../outgoing/origin.js';
import { sendToDestination } from '../outgoing/source-destination.js';
import type { Entity } from '../query/conditions.js';
import { isPromise, type Eventually } from '../util/eventually.js';
import { binaryResponse } from './binary-response.js';
import { RequestContext } from './context.js';
import { errorResponse } from './error-response.js';
import { LISTING, type PipelineHost } from './host.js';
import { Operating } from './operating.js';
import { checkRead } from './preconditions.js';
import { respond } from './respond.js';
import { rootResponse } from './root.js';
import { openStream, wantsEventStream } from './stream.js';

/**
 * The request pipeline, in order:
 * auth -> parse -> macro rewrite -> resolve resource -> operation (reading the body)
 * -> write result. Every failure is a ServiceError turned into a response in one place.
 */
export function handle(host: PipelineHost, request: PlainRequest, depth = 0, context?: unknown, origin?: Origin): Promise<PlainResponse> {
  const response = answer(host, request, depth, context, origin);
  return isPromise(response) ? response : Promise.resolve(response);
}

/**
 * `handle`, answered in the caller's turn when no step waits (no async authenticator,
 * macro or hook, a storage that answers at once: a GET from the memory storage), else a
 * promise. Each step runs the next at once when it has its value: the same steps in the
 * same order either way, only without the promise hops (docs/performance.md).
 */
export function answer(
  host: PipelineHost,
  request: PlainRequest,
  depth = 0,
  context?: unknown,
  origin?: Origin,
  trace?: RequestTrace,
): Eventually<PlainResponse> {
  const ctx = new RequestContext(request, host.options.maxBodyBytes, depth, context, origin);
  ctx.trace = trace;
  try {
    const described = rootResponse(host, ctx);
    // A failure (401) is answered as any other.
    if (described !== undefined) return isPromise(described) ? answered(host, ctx, described) : described;
    const principal = host.authenticate(ctx);
    const response = principal instanceof Promise ? authenticatedLater(host, ctx, principal) : authenticated(host, ctx, principal);
    return isPromise(response) ? answered(host, ctx, response) : response;
  } catch (e) {
    return errorResponse(host, ctx, e);
  }
}

// The steps' continuations through promises are functions of their own (here and below):
// a closure in a step would cost every request an allocation, waiting or not.

/** The response a step will give, or the error response if it fails. */
async function answered(host: PipelineHost, ctx: RequestContext, response: PromiseLike<PlainResponse>): Promise<PlainResponse> {
  try {
    return await response;
  } catch (e) {
    return errorResponse(host, ctx, e);
  }
}

async function authenticatedLater(host: PipelineHost, ctx: RequestContext, principal: Promise<unknown>): Promise<PlainResponse> {
  return authenticated(host, ctx, await principal);
}

function authenticated(host: PipelineHost, ctx: RequestContext, principal: unknown): Eventually<PlainResponse> {
  ctx.principal = principal;
  const parsed = parseUri(ctx.uri);
  return parsed.macro ? rewritten(host, ctx, parsed) : run(host, ctx, parsed);
}

async function rewritten(host: PipelineHost, ctx: RequestContext, parsed: ParsedUri): Promise<PlainResponse> {
  return run(host, ctx, await host.macros.rewrite(parsed, ctx));
}

/** The operation on the resolved resource, then its result written (or sent to a Destination). */
function run(host: PipelineHost, ctx: RequestContext, parsed: ParsedUri): Eventually<PlainResponse> {
  const resource = host.resources.resolve(parsed.resource === '' ? LISTING : parsed.resource);
  ctx.resource = resource;
  if (ctx.trace !== undefined) ctx.trace.resource = resource.name;
  // A bare value (`/posts/1`) is no error for a resource with a key; the rest of the URI must still parse.
  const error = parsed.bare !== undefined && resource.key ? parsed.restError : parsed.error;
  if (error) throw error;
  const caller: Caller = { context: ctx.context, principal: ctx.principal, method: ctx.method };
  // An event resource takes no request but a subscription (its rights are its resource's).
  if (resource.kind === 'EventResource' && ctx.method === 'GET' && wantsEventStream(ctx.header('accept')))
    return openStream(host, ctx, caller);
  host.authorize(caller, resource.name, ctx.method);
  const operation = OPERATIONS[ctx.method];
  if (!operation || !resource.allows(ctx.method)) {
    throw new ServiceError('MethodNotAllowed', `${ctx.method} is not allowed on '${resource.name}'`, {
      headers: { allow: resource.methods.join(', ') },
    });
  }
  if (resource.binary !== undefined) return binaryResponse(host, ctx, resource, parsed, caller);
  const rows = resource.rows(caller, ruleMethod(ctx.method));
  const query = resource.query(parsed, rows);
  const output = host.protocols.forAccept(ctx.header('accept'));
  if (query.through !== undefined) return throughRelations(host, ctx, resource, query, caller, rows, output, operation);
  return prepared(host, ctx, resource, output, operation, new Operating(host, ctx, resource, query, caller, rows, output));
}

function prepared(
  host: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  output: Negotiated,
  operation: (operating: Operating) => Eventually<Result>,
  operating: Operating,
): Eventually<PlainResponse> {
  // A type that loads its writer on first use (Excel) is ready, or the request is refused, before anything is written.
  const preparing = output.contentType.prepare?.();
  if (preparing !== undefined) return preparing.then(() => operate(host, ctx, resource, output, operation, operating));
  return operate(host, ctx, resource, output, operation, operating);
}

function operate(
  host: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  output: Negotiated,
  operation: (operating: Operating) => Eventually<Result>,
  operating: Operating,
): Eventually<PlainResponse> {
  if (ctx.trace !== undefined) ctx.trace.operationStart = performance.now();
  const result = operation(operating);
  return isPromise(result) ? finishLater(host, ctx, resource, output, result) : finish(host, ctx, resource, output, result);
}

/**
 * A query with conditions through relations (`Customer.Name=Ann`, docs/relations.md): they
 * are made conditions on the resource's own properties, reading the related resources with
 * the caller's rights, before the operation runs it.
 */
async function throughRelations(
  host: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  query: CompiledQuery,
  caller: Caller,
  rows: RowRule | null,
  output: Negotiated,
  operation: (operating: Operating) => Eventually<Result>,
): Promise<PlainResponse> {
  if (ctx.method === 'PUT')
    throw new ServiceError(
      'InvalidConditionSyntax',
      `A PUT's conditions give the values of the entity it writes: '${query.through![0].text}' goes through a relation; use PATCH to change the entities it selects`,
    );
  const reads = { caller, authorize: (name: string, method: string) => host.authorize(caller, name, method), select: selectOutput };
  const resolved = await resolveQuery(resource, query, {
    ...reads,
    budget: budgetsOf({ searchBudget: host.options.searchBudget, derived: host.options }),
  });
  return prepared(host, ctx, resource, output, operation, new Operating(host, ctx, resource, resolved, caller, rows, output));
}

async function finishLater(
  host: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  output: Negotiated,
  result: PromiseLike<Result>,
): Promise<PlainResponse> {
  return finish(host, ctx, resource, output, await result);
}

function finish(
  host: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  output: Negotiated,
  result: Result,
): Eventually<PlainResponse> {
  const trace = ctx.trace;
  if (trace?.operationStart !== undefined) trace.operationMs = performance.now() - trace.operationStart;
  const destination = ctx.method === 'GET' ? ctx.header('destination') : undefined;
  if (destination !== undefined) return sent(ctx, resource, output, sendToDestination(host.headerRequests, ctx, result, destination));
  if (result.kind === 'stream') result = { ...result, entities: reported(host, ctx, result.entities) };
  return checkRead(ctx, result) ?? respond(ctx, resource, output, result);
}

/**
 * A stream's entities, a failure while they are read reported as any other (onError, an
 * Error record) before it cuts the body short: the status went out, the error must not be lost.
 */
async function* reported(host: PipelineHost, ctx: RequestContext, entities: AsyncIterable<Entity>): AsyncGenerator<Entity> {
  try {
    yield* entities;
  } catch (e) {
    await errorResponse(host, ctx, e);
    throw e;
  }
}

async function sent(ctx: RequestContext, resource: Resource, output: Negotiated, result: Promise<Result>): Promise<PlainResponse> {
  return respond(ctx, resource, output, await result);
}
