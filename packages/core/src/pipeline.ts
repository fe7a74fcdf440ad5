import { ruleMethod, type Caller } from './caller.js';
import type { ContentType } from './content-types/content-type.js';
import { ServiceError } from './errors.js';
import { parseUri } from './grammar/parse.js';
import { RequestContext } from './http/context.js';
import type { PlainRequest, PlainResponse } from './http/types.js';
import { OPERATIONS } from './operations.js';
import type { Origin } from './origin.js';
import { rootResponse } from './root.js';
import type { Negotiated } from './protocols.js';
import type { Entity } from './query/conditions.js';
import type { Resource } from './resources.js';
import type { Result } from './results.js';
import type { Service } from './service.js';
import { sendToDestination } from './source-destination.js';

export const LISTING = 'Service.AvailableResource';

/**
 * The request pipeline, in order:
 * auth -> parse -> macro rewrite -> resolve resource -> operation (reading the body)
 * -> write result. Every failure is a ServiceError turned into a response in one place.
 */
export async function handle(
  service: Service,
  request: PlainRequest,
  depth = 0,
  context?: unknown,
  origin?: Origin,
): Promise<PlainResponse> {
  const ctx = new RequestContext(request, service.options.maxBodyBytes, depth, context, origin);
  try {
    const described = rootResponse(service, ctx);
    // Awaited here so that a failure (401) is answered by the catch below.
    if (described !== undefined) return await described;
    let principal = service.authenticate(ctx);
    if (principal instanceof Promise) principal = await principal;
    ctx.principal = principal;
    let parsed = parseUri(ctx.uri);
    if (parsed.macro) parsed = await service.macros.rewrite(parsed, ctx);
    const resource = service.resources.resolve(parsed.resource === '' ? LISTING : parsed.resource);
    ctx.resource = resource;
    // A bare value (`/posts/1`) is no error for a resource with a key.
    if (parsed.error && !(parsed.bare !== undefined && resource.key)) throw parsed.error;
    const caller: Caller = { context: ctx.context, principal, method: ctx.method };
    const authorize = (name: string, method: string) => service.authorize(caller, name, method);
    authorize(resource.name, ctx.method);
    const operation = OPERATIONS[ctx.method];
    if (!operation || !resource.allows(ctx.method)) {
      throw new ServiceError('MethodNotAllowed', `${ctx.method} is not allowed on '${resource.name}'`, {
        headers: { allow: resource.methods.join(', ') },
      });
    }
    const rows = resource.rows(caller, ruleMethod(ctx.method));
    const query = resource.query(parsed, rows);
    const output = service.protocols.forAccept(ctx.header('accept'));
    let result = await operation({
      resource,
      query,
      // Read once: a retried operation (Conflict) or a Source GET must not run twice.
      input: once(() => service.readInput(ctx)),
      changed: (kind, entities) => changed(service, resource, kind, entities, ctx),
      authorize,
      caller,
      rows,
      searchBudget: service.options.searchBudget,
    });
    const destination = ctx.method === 'GET' ? ctx.header('destination') : undefined;
    if (destination !== undefined) result = await sendToDestination(service, ctx, result, destination);
    return respond(ctx, resource, output, result);
  } catch (e) {
    return service.errorResponse(ctx, e);
  }
}

async function changed(service: Service, resource: Resource, kind: string, entities: Entity[], ctx: RequestContext): Promise<void> {
  if (resource.raisesEvents && entities.length > 0)
    await service.events.raise(
      `${resource.name}.${kind}`,
      entities.map((e) => resource.output(e)),
      { depth: ctx.depth, origin: ctx.origin },
    );
}

function statusOf(method: string, result: Result): number {
  switch (result.kind) {
    case 'entities':
      return result.entities.length > 0 ? 200 : 204;
    case 'count':
      return 200;
    case 'change':
      return method === 'POST' || method === 'PUT' ? ((result.inserted ?? 0) > 0 && result.updated === undefined ? 201 : 200) : 200;
    case 'passthrough':
      return result.status;
  }
}

function respond(ctx: RequestContext, resource: Resource, output: Negotiated, result: Result): PlainResponse {
  const status = statusOf(ctx.method, result);
  if (result.kind === 'passthrough') return { status, headers: result.headers, body: ctx.method === 'HEAD' ? null : result.body };
  if (status === 204) return { status, headers: {}, body: null };
  const type = output.contentType;
  const headers: Record<string, string> = { 'content-type': contentTypeHeader(type) };
  if (type.extension) headers['content-disposition'] = attachment(`${resource.name}_${stamp(ctx.time)}.${type.extension}`);
  // HEAD answers with the headers a GET would have, and no body.
  if (ctx.method === 'HEAD') return { status, headers, body: null };
  const body = type.write!(result, { params: output.params, elapsedMs: () => ctx.elapsedMs() });
  return { status, headers, body };
}

/** Content-Type values, made once per content type rather than once per response. */
const contentTypeHeaders = new WeakMap<ContentType, string>();

function contentTypeHeader(type: ContentType): string {
  let header = contentTypeHeaders.get(type);
  if (header === undefined) {
    header = type.mimeType === 'application/json' || type.mimeType.startsWith('text/') ? `${type.mimeType}; charset=utf-8` : type.mimeType;
    contentTypeHeaders.set(type, header);
  }
  return header;
}

/**
 * Content-Disposition for a download (RFC 6266): an ASCII `filename` every client reads,
 * and `filename*` in UTF-8 when the name has other characters (`/日本` -> `__.xlsx` and
 * `%E6%97%A5%E6%9C%AC.xlsx`). Header values must be Latin-1, so the name is never sent raw.
 */
export function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return ascii === name
    ? `attachment; filename="${name}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** yyMMddHHmmss in UTC. */
function stamp(time: Date): string {
  return time.toISOString().replace(/[-:T]/g, '').slice(2, 14);
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= make());
}
