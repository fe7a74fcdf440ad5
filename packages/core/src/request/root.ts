/**
 * `GET /` negotiation (docs/openapi.md): the resource listing stays the default; a client that
 * asks for OpenAPI gets the document, a browser gets the explorer page. Everything is
 * served by the service itself, nothing from other hosts.
 */
import { parseAccept } from '../content-types/negotiation.js';
import { explorerPage } from '../admin/explorer.js';
import type { Caller } from '../model/caller.js';
import type { RequestContext } from './context.js';
import type { PlainResponse } from '../http/types.js';
import { OPENAPI_MEDIA_TYPES, type OpenApiOptions } from '../admin/openapi.js';
import type { Protocols } from '../content-types/protocols.js';

/** What `GET /` is answered from. */
export interface RootHost {
  readonly protocols: Protocols;
  /** The caller's principal; throws 401. */
  authenticate(ctx: RequestContext): unknown;
  /** The document as the caller may use the service. */
  openapi(options: OpenApiOptions, caller: Caller): Record<string, unknown>;
}

/** The answer to `GET /` when it is not the JSON listing; undefined otherwise. */
export function rootResponse(service: RootHost, ctx: RequestContext): PlainResponse | Promise<PlainResponse> | undefined {
  if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || (ctx.uri !== '/' && ctx.uri !== '')) return undefined;
  const accept = ctx.header('accept');
  if (accept === undefined) return undefined;
  const ranges = parseAccept(accept).filter((r) => r.q > 0);
  // A reduce, not Math.max(...): the ranges are as many as the caller writes.
  const best = (types: string[]) => ranges.reduce((q, r) => (types.includes(r.type) && r.q > q ? r.q : q), 0);
  const openapi = ranges.filter((r) => OPENAPI_MEDIA_TYPES.includes(r.type)).sort((a, b) => b.q - a.q)[0];
  if (openapi !== undefined && openapi.q >= best(['application/json'])) return openapiResponse(service, ctx, openapi.type);
  // A browser lists text/html first and reaches JSON only through */*; a client that names JSON keeps the listing.
  if (best(['text/html']) > 0 && !service.protocols.namesWritableType(accept)) {
    // The page holds no data and no key: it asks the user for one, so it is open.
    return {
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' },
      body: ctx.method === 'HEAD' ? null : explorerPage(ctx.basePath),
    };
  }
  return undefined;
}

async function openapiResponse(service: RootHost, ctx: RequestContext, requested: string): Promise<PlainResponse> {
  // The document names what the caller may use: it needs a valid key, as the listing does.
  ctx.principal = await service.authenticate(ctx);
  const type = requested.endsWith('yaml')
    ? 'application/yaml'
    : requested === 'application/vnd.oai.openapi'
      ? 'application/vnd.oai.openapi+json'
      : requested;
  // JSON text is valid YAML 1.2, so the YAML variants get the same bytes.
  const caller: Caller = { context: ctx.context, principal: ctx.principal, method: ctx.method };
  const body = JSON.stringify(service.openapi({ basePath: ctx.basePath }, caller));
  return { status: 200, headers: { 'content-type': `${type}; charset=utf-8` }, body: ctx.method === 'HEAD' ? null : body };
}
