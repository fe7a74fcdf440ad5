// An operation's result as the response the adapters write: the status, Content-Type,
// ETag, a download's Content-Disposition, and the body the negotiated content type writes.
import type { WriteContext } from '../content-types/content-type.js';
import { contentTypeHeader, type Negotiated } from '../content-types/protocols.js';
import type { Resource } from '../model/resources.js';
import type { Result } from '../operations/results.js';
import type { RequestContext } from './context.js';
import { entityTag, versionOf } from './preconditions.js';
import type { PlainResponse } from '../http/types.js';

function statusOf(method: string, result: Result): number {
  switch (result.kind) {
    case 'stream':
      return 200;
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

export function respond(ctx: RequestContext, resource: Resource, output: Negotiated, result: Result): PlainResponse {
  const status = statusOf(ctx.method, result);
  if (result.kind === 'passthrough') return { status, headers: result.headers, body: ctx.method === 'HEAD' ? null : result.body };
  // count=true: the total as a header too (json-server's X-Total-Count), also on a 204 past the last page.
  const total = (result.kind === 'entities' || result.kind === 'stream') && result.total !== undefined ? String(result.total) : undefined;
  if (status === 204) return { status, headers: total === undefined ? {} : { 'x-total-count': total }, body: null };
  const type = output.contentType;
  const headers: Record<string, string> = { 'content-type': output.header ?? contentTypeHeader(type) };
  if (total !== undefined) headers['x-total-count'] = total;
  const version = versionOf(result);
  if (version !== undefined) headers.etag = entityTag(version);
  if (type.extension) headers['content-disposition'] = attachment(`${resource.name}_${stamp(ctx.time)}.${type.extension}`);
  // HEAD answers with the headers a GET would have, and no body.
  if (ctx.method === 'HEAD') return { status, headers, body: null };
  const body = type.write!(result, new Writing(output.params, ctx));
  return { status, headers, body };
}

/** What the content type writes with: one object a response, not an object and a closure. */
class Writing implements WriteContext {
  constructor(
    readonly params: Record<string, string>,
    private readonly ctx: RequestContext,
  ) {}

  elapsedMs(): number {
    return this.ctx.elapsedMs();
  }
}

/**
 * Content-Disposition for a download (RFC 6266): an ASCII `filename` every client reads,
 * and `filename*` in UTF-8 when the name has other characters (`/日本` -> `__.xlsx` and
 * `%E6%97%A5%E6%9C%AC.xlsx`). Header values must be Latin-1, so the name is never sent raw.
 */
function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return ascii === name
    ? `attachment; filename="${name}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** yyMMddHHmmss in UTC. */
function stamp(time: Date): string {
  return time.toISOString().replace(/[-:T]/g, '').slice(2, 14);
}
