import { isMediaType, parseMediaTypeAt } from '../content-types/media-type.js';
import type { Protocols } from '../content-types/protocols.js';
import type { PlainResponse } from '../http/types.js';
import type { Entity } from '../query/conditions.js';

/** The value of a header given in any case. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const key in headers) if (key.toLowerCase() === lower) return headers[key];
  return undefined;
}

/** Reads a body into one buffer; `limit` bytes at most (more is an error). */
export async function collectBody(body: PlainResponse['body'], limit = Infinity): Promise<Buffer> {
  if (body === null || body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    size += buf.length;
    if (size > limit) throw new RangeError(`The body is larger than ${limit} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Entities in the format a Content-Type header names (default JSON), written by the
 * service's protocols. JSON is always a bare array, even for one entity (docs/webhooks.md).
 */
export async function serializeEntities(
  protocols: Protocols,
  entities: Entity[],
  contentTypeHeader: string | undefined,
): Promise<{ body: Buffer; contentType: string }> {
  const { contentType, params } = protocols.forAccept(contentTypeHeader);
  await contentType.prepare?.();
  const body = contentType.write!({ kind: 'entities', entities }, { params: { ...params, raw: 'true' }, elapsedMs: () => 0 });
  // A media type is sent as the webhook names it; a short binding (`excel`, `jl`) is no media type, so its type's own is sent.
  const named = contentTypeHeader !== undefined && isMediaType(parseMediaTypeAt(contentTypeHeader).type);
  const header = named
    ? contentTypeHeader
    : contentType.mimeType === 'application/json'
      ? 'application/json; charset=utf-8'
      : contentType.mimeType;
  return { body: await collectBody(body), contentType: header };
}
