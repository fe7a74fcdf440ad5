import { isMediaType, parseMediaTypeAt } from '../content-types/media-type.js';
import type { BodyChunk, PlainResponse } from '../http/types.js';
import type { Origin } from '../origin.js';
import type { Entity } from '../query/conditions.js';
import type { LocalRequests } from '../local-requests.js';
import type { Protocols } from '../protocols.js';
import type { OutboxMessage } from './outbox.js';
import type { Webhook } from './webhook.js';

/** What a webhook sends: a body with its Content-Type, or nothing at all (aborted). */
export type Payload = { kind: 'send'; body: Buffer | null; contentType: string | null } | { kind: 'abort'; reason: string };

const JSON_TYPE = /^application\/([\w.+-]*\+)?json\b/i;

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
  for await (const chunk of body as AsyncIterable<BodyChunk>) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    size += buf.length;
    if (size > limit) throw new RangeError(`The body is larger than ${limit} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Entities in the format a Content-Type header names (default JSON), written by the
 * service's protocols. JSON is always a bare array, even for one entity (SPEC 6.3).
 */
export async function serializeEntities(
  protocols: Protocols,
  entities: Entity[],
  contentTypeHeader: string | undefined,
): Promise<{ body: Buffer; contentType: string }> {
  const { contentType, params } = protocols.forAccept(contentTypeHeader);
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

/** Entities from a JSON body: an array, one object, or the success envelope's Data. */
function entitiesOfJson(bytes: Buffer): Entity[] | null {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const envelope = value as Record<string, unknown>;
    if (envelope.Status === 'success' && Array.isArray(envelope.Data)) value = envelope.Data;
  }
  const items = Array.isArray(value) ? value : [value];
  return items.every((i) => i !== null && typeof i === 'object' && !Array.isArray(i)) ? (items as Entity[]) : null;
}

/** What a payload is made with: the service's content types, and local requests for custom payloads. */
export interface PayloadDeps {
  readonly protocols: Protocols;
  readonly local: LocalRequests;
}

/**
 * The body of one delivery (SPEC 6.3, DESIGN 8): the custom payload request's result,
 * else the event's binary payload as-is, else the matching entities in the webhook's
 * Content-Type.
 */
export async function buildPayload(deps: PayloadDeps, webhook: Webhook, message: OutboxMessage, origin: Origin): Promise<Payload> {
  const contentTypeHeader = headerValue(webhook.Headers, 'content-type');
  if (webhook.CustomPayloadRequest) return customPayload(deps, webhook, message.Depth, origin, contentTypeHeader);
  if (message.Binary) return { kind: 'send', body: Buffer.from(message.Binary.Body, 'base64'), contentType: message.Binary.ContentType };
  const { body, contentType } = await serializeEntities(deps.protocols, message.Entities ?? [], contentTypeHeader);
  return { kind: 'send', body, contentType };
}

async function customPayload(
  deps: PayloadDeps,
  webhook: Webhook,
  depth: number,
  origin: Origin,
  contentTypeHeader: string | undefined,
): Promise<Payload> {
  const request = webhook.CustomPayloadRequest!;
  const headers: Record<string, string> = { accept: 'application/json;raw=true' };
  for (const [name, value] of Object.entries(request.Headers)) headers[name.toLowerCase()] = value;
  if (request.Body !== null && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  let response: PlainResponse;
  try {
    response = await deps.local.handle(
      { method: 'GET', uri: request.URI, headers, body: request.Body === null ? null : JSON.stringify(request.Body) },
      depth + 1,
      undefined,
      origin,
    );
  } catch (e) {
    const message = (e as Error).message;
    if (request.BreakOnError) return { kind: 'abort', reason: `the custom payload request failed: ${message}` };
    return {
      kind: 'send',
      body: Buffer.from(JSON.stringify({ Status: 'fail', Message: message })),
      contentType: 'application/json; charset=utf-8',
    };
  }
  const bytes = await collectBody(response.body);
  const type = response.headers['content-type'] ?? null;
  if (response.status >= 400) {
    if (request.BreakOnError)
      return {
        kind: 'abort',
        reason: `the custom payload request ${request.URI} answered ${response.status}: ${bytes.toString('utf8').slice(0, 300)}`,
      };
    return { kind: 'send', body: bytes, contentType: type };
  }
  if (response.status === 204 || bytes.length === 0) {
    if (request.BreakOnNoContent)
      return { kind: 'abort', reason: `the custom payload request ${request.URI} had no content (BreakOnNoContent)` };
    return { kind: 'send', body: null, contentType: null };
  }
  const entities = type !== null && JSON_TYPE.test(type) ? entitiesOfJson(bytes) : null;
  if (entities === null) return { kind: 'send', body: bytes, contentType: type };
  const { body, contentType } = await serializeEntities(deps.protocols, entities, contentTypeHeader);
  return { kind: 'send', body, contentType };
}
