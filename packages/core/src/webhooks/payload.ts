import type { Origin } from '../outgoing/origin.js';
import type { Entity } from '../query/conditions.js';
import type { LocalRequests } from '../outgoing/local-requests.js';
import type { Protocols } from '../content-types/protocols.js';
import { collectBody, headerValue, serializeEntities } from '../outgoing/body.js';
import type { PlainResponse } from '../http/types.js';
import type { OutboxMessage } from './outbox.js';
import type { Webhook } from './webhook.js';
import { parseUri } from '../grammar/parse.js';
import type { ResourceRegistry } from '../model/resources.js';

/** What a webhook sends: a body with its Content-Type, or nothing at all (aborted). */
export type Payload = { kind: 'send'; body: Buffer | null; contentType: string | null } | { kind: 'abort'; reason: string };

const JSON_TYPE = /^application\/([\w.+-]*\+)?json\b/i;

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
  /** Tells a binary resource's bytes (sent as they are) from entities (docs/binary-resources.md). */
  readonly resources: ResourceRegistry;
}

/** Whether a custom payload request reads a binary resource: its bytes go as they are, whatever their type. */
function readsBinary(deps: PayloadDeps, uri: string): boolean {
  try {
    const parsed = parseUri(uri);
    return !parsed.macro && parsed.resource !== '' && deps.resources.resolve(parsed.resource).kind === 'BinaryResource';
  } catch {
    // Not a resource this service has (any more): the request answered with an error, or with entities.
    return false;
  }
}

/**
 * The body of one delivery (docs/webhooks.md): the custom payload request's result,
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
  const entities = type !== null && JSON_TYPE.test(type) && !readsBinary(deps, request.URI) ? entitiesOfJson(bytes) : null;
  if (entities === null) return { kind: 'send', body: bytes, contentType: type };
  const { body, contentType } = await serializeEntities(deps.protocols, entities, contentTypeHeader);
  return { kind: 'send', body, contentType };
}
