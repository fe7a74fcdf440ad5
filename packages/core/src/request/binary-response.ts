// A GET or HEAD of a binary resource (docs/binary-resources.md): the app's reader gets the
// URI's conditions and the caller; its bytes go out as they are, with its content type.
import { ServiceError } from '../errors.js';
import type { Condition, ParsedUri } from '../grammar/parse.js';
import type { BodyChunk, PlainResponse } from '../http/types.js';
import { binaryRequest, readBinary } from '../model/binary-resources.js';
import type { Caller } from '../model/caller.js';
import type { Resource } from '../model/resources.js';
import type { RequestContext } from './context.js';
import { errorResponse } from './error-response.js';
import type { PipelineHost } from './host.js';
import { entityTag, parseEntityTags } from './preconditions.js';

export async function binaryResponse(
  host: PipelineHost,
  ctx: RequestContext,
  resource: Resource,
  parsed: ParsedUri,
  caller: Caller,
): Promise<PlainResponse> {
  if (parsed.view !== null) throw new ServiceError('UnknownView', `Binary resource '${resource.name}' has no views`);
  if (parsed.meta.length > 0)
    throw new ServiceError('InvalidMetaConditionKey', `Binary resource '${resource.name}' takes conditions only, no meta-conditions`);
  if (ctx.header('destination') !== undefined)
    throw new ServiceError('InvalidDestination', `The bytes of binary resource '${resource.name}' cannot be sent to a Destination`);
  const conditions: Condition[] = [];
  for (const c of parsed.conditions) {
    if ('anyOf' in c)
      throw new ServiceError(
        'InvalidConditionSyntax',
        `Binary resource '${resource.name}' takes conditions joined by & only, not '${c.text}'`,
      );
    conditions.push(c);
  }
  const method = ctx.method === 'HEAD' ? 'HEAD' : 'GET';
  const request = binaryRequest(resource.name, method, ctx.uri, conditions, { ...ctx.clientHeaders });
  const read = await readBinary(resource.binary!, request, caller);
  if (read === null) return { status: 204, headers: {}, body: null };
  const headers: Record<string, string> = { 'content-type': read.contentType };
  if (read.version !== undefined) headers.etag = entityTag(read.version);
  const unsent = (response: PlainResponse) => read.discard().then(() => response);
  const ifMatch = ctx.header('if-match');
  if (ifMatch !== undefined && !matches(parseEntityTags(ifMatch, false), read.version)) {
    await read.discard();
    throw new ServiceError('PreconditionFailed', `If-Match does not name the current version of '${resource.name}'`);
  }
  const ifNoneMatch = ctx.header('if-none-match');
  if (ifNoneMatch !== undefined && matches(parseEntityTags(ifNoneMatch, true), read.version))
    return unsent({ status: 304, headers: read.version === undefined ? {} : { etag: headers.etag }, body: null });
  if (method === 'HEAD') return unsent({ status: 200, headers, body: null });
  const body = typeof read.body === 'string' || read.body instanceof Uint8Array ? read.body : reported(host, ctx, read.body);
  return { status: 200, headers, body };
}

/** `*` matches what exists; else one of the tags is the version. */
function matches(tags: readonly string[], version: string | undefined): boolean {
  return tags.includes('*') || (version !== undefined && tags.includes(version));
}

/** The stream, a failure while it is read reported (onError, an Error record) before it cuts the body short. */
async function* reported(host: PipelineHost, ctx: RequestContext, chunks: AsyncIterable<BodyChunk>): AsyncGenerator<BodyChunk> {
  try {
    yield* chunks;
  } catch (e) {
    await errorResponse(host, ctx, e);
    throw e;
  }
}
