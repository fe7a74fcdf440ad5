import { isEntityBody, isStringRecord } from '../content-types/json.js';
import { isSecretHeader } from '../model/redaction.js';
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../errors.js';
import { parseUri } from '../grammar/parse.js';
import type { Caller } from '../model/caller.js';
import { METHODS, type Method } from '../http/types.js';
import type { Entity } from '../query/conditions.js';
import type { JsonSchema } from '../query/schema-types.js';
import type { Protocols } from '../content-types/protocols.js';
import { isAbsolute, refusedHost } from '../outgoing/guard.js';
import { compileSelector, type SelectorCatalog } from './selector.js';

export const WEBHOOK_RESOURCE = 'Service.Admin.Webhook';

/** docs/webhooks.md: a local GET whose result replaces the event payload. */
export interface CustomPayloadRequest {
  Method: 'GET';
  URI: string;
  Headers: Record<string, string>;
  Body: Entity | Entity[] | null;
  BreakOnError: boolean;
  BreakOnNoContent: boolean;
}

/** A stored webhook (docs/webhooks.md); `Secret` is write-only and never output, `Rows` is set by the service and never output. */
export interface Webhook {
  Id: string;
  Label: string | null;
  Method: Method;
  Destination: string;
  EventSelector: string;
  Headers: Record<string, string>;
  IsPaused: boolean;
  CustomPayloadRequest: CustomPayloadRequest | null;
  Secret: string | null;
  /**
   * The row rule of the webhook's author on the event's resource, as conditions
   * (`Owner=ann`), when saved; null when the author sees every row. Deliveries carry only
   * the entities inside it, so a webhook never sends a row its author may not read.
   * Absent from webhooks saved before rules existed.
   */
  Rows?: string | null;
}

/** What clients see of a webhook: no secret, credentials masked. */
export type WebhookOutput = Omit<Webhook, 'Secret' | 'Rows'>;

/**
 * A stored entity as a webhook: left-out properties take their defaults (a data file's
 * hand-written webhook); one that edited storage broke fires nothing.
 */
export function storedWebhook(e: Entity): Webhook | undefined {
  const { Id, Label = null, Method = 'POST', Destination, EventSelector, Headers = {}, IsPaused = false } = e;
  const { CustomPayloadRequest = null, Secret = null, Rows } = e;
  if (typeof Id !== 'string' || typeof Destination !== 'string' || typeof EventSelector !== 'string') return undefined;
  const method = typeof Method === 'string' ? Method.toUpperCase() : undefined;
  if ((Label !== null && typeof Label !== 'string') || method === undefined || !isMethod(method)) return undefined;
  if (!isStringRecord(Headers) || typeof IsPaused !== 'boolean' || (Secret !== null && typeof Secret !== 'string')) return undefined;
  if (Rows !== undefined && Rows !== null && typeof Rows !== 'string') return undefined;
  const request = CustomPayloadRequest === null ? null : storedRequest(CustomPayloadRequest);
  if (request === undefined) return undefined;
  return { Id, Label, Method: method, Destination, EventSelector, Headers, IsPaused, CustomPayloadRequest: request, Secret, Rows };
}

function storedRequest(value: unknown): CustomPayloadRequest | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { URI, Headers = {}, Body = null, BreakOnError = false, BreakOnNoContent = false } = value as Record<string, unknown>;
  if (typeof URI !== 'string' || !isStringRecord(Headers) || (Body !== null && !isEntityBody(Body))) return undefined;
  if (typeof BreakOnError !== 'boolean' || typeof BreakOnNoContent !== 'boolean') return undefined;
  return { Method: 'GET', URI, Headers, Body, BreakOnError, BreakOnNoContent };
}

function isMethod(text: string): text is Method {
  return (METHODS as readonly string[]).includes(text);
}

const PROPERTIES = [
  'Id',
  'Label',
  'Method',
  'Destination',
  'EventSelector',
  'Headers',
  'IsPaused',
  'CustomPayloadRequest',
  'Secret',
  'Rows',
] as const;
const REQUEST_PROPERTIES = ['Method', 'URI', 'Headers', 'Body', 'BreakOnError', 'BreakOnNoContent'] as const;

const nullable = (type: string) => ({ type: [type, 'null'] });
const HEADERS_SCHEMA = { type: 'object', additionalProperties: { type: 'string' } };

/**
 * Types condition values (`IsPaused=true`) and, by leaving `Secret` out, refuses
 * conditions on the secret: `/Service.Admin.Webhook/Secret>whsec_M` would otherwise
 * let a reader guess it one character at a time.
 */
export const WEBHOOK_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    Id: { type: 'string' },
    Label: nullable('string'),
    Method: { type: 'string' },
    Destination: { type: 'string' },
    EventSelector: { type: 'string' },
    Headers: HEADERS_SCHEMA,
    IsPaused: { type: 'boolean' },
    CustomPayloadRequest: {
      type: ['object', 'null'],
      properties: {
        Method: { type: 'string' },
        URI: { type: 'string' },
        Headers: HEADERS_SCHEMA,
        Body: { type: ['object', 'array', 'null'] },
        BreakOnError: { type: 'boolean' },
        BreakOnNoContent: { type: 'boolean' },
      },
    },
  },
};

function invalid(property: string, message: string): never {
  throw new ServiceError('InvalidResourceEntity', message, { data: { [property]: message } });
}

/**
 * Maps input keys to their canonical names, case-insensitively. When a key comes in two
 * spellings (a PATCH merges `{"ispaused": true}` into a stored `IsPaused`), the
 * non-canonical one came with the request and wins.
 */
function canonicalFields(input: Entity, names: readonly string[], where: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const fromRequest = new Set<string>();
  for (const [key, value] of Object.entries(input)) {
    const name = names.find((p) => p.toLowerCase() === key.toLowerCase());
    if (!name) invalid(key, `Unknown property '${key}'. ${where} properties: ${names.join(', ')}`);
    if (key !== name) fromRequest.add(name);
    else if (fromRequest.has(name)) continue;
    fields[name] = value;
  }
  return fields;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const SET_BY_SERVICE = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** Headers that would make a local delivery or custom payload read or send elsewhere (docs/security.md#webhooks). */
const REDIRECTING = new Set(['source', 'destination']);

function headersOf(value: unknown, property: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    invalid(property, `${property} must be an object of header names and string values`);
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (!TOKEN.test(name)) invalid(property, `'${name}' in ${property} is not a valid header name`);
    if (SET_BY_SERVICE.has(name.toLowerCase())) invalid(property, `${property} may not set '${name}': the service sets it`);
    if (REDIRECTING.has(name.toLowerCase()))
      invalid(property, `${property} may not set '${name}': a webhook sends to its Destination only, with its own payload`);
    if (typeof v !== 'string') invalid(property, `The value of '${name}' in ${property} must be a string`);
    if (/[\r\n\0]/.test(v)) invalid(property, `The value of '${name}' in ${property} may not hold line breaks`);
    headers[name] = v;
  }
  return headers;
}

function booleanOf(value: unknown, property: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') invalid(property, `${property} must be true or false`);
  return value;
}

/** A relative URI that parses and names a resource (or a macro). */
function checkLocalUri(catalog: WebhookCatalog, uri: string, property: string): string {
  const local = uri.startsWith('/') ? uri : `/${uri}`;
  let parsed;
  try {
    parsed = parseUri(local);
  } catch (e) {
    return invalid(property, `${property} '${uri}' does not parse: ${(e as Error).message}`);
  }
  // A bare key (`/Clinic.Vet/ana`) is read with the key of the resource it addresses, as a
  // request's is; after a macro (`/$cats/7`) that macro's resource decides, when it is called.
  const unparsed = (error: ServiceError | null | undefined) => {
    if (error) invalid(property, `${property} '${uri}' does not parse: ${error.message}`);
  };
  if (parsed.bare === undefined) unparsed(parsed.error);
  if (parsed.macro) unparsed(parsed.bare === undefined ? parsed.error : parsed.restError);
  else {
    let resource;
    try {
      resource = catalog.resources.resolve(parsed.resource === '' ? 'Service.AvailableResource' : parsed.resource);
    } catch (e) {
      return invalid(property, `${property} '${uri}': ${(e as Error).message}`);
    }
    if (resource.kind === 'EventResource')
      invalid(property, `${property} '${uri}' names the event '${resource.name}', which takes no requests`);
    if (parsed.bare !== undefined) unparsed(resource.key ? parsed.restError : parsed.error);
  }
  return local;
}

function destinationOf(catalog: WebhookCatalog, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    invalid('Destination', 'Destination must be a URI: relative (/Resource) for a local resource, or absolute (https://...)');
  const text = value.trim();
  if (!isAbsolute(text)) return checkLocalUri(catalog, text, 'Destination');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return invalid('Destination', `Destination '${text}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') invalid('Destination', `Destination '${text}' must use http or https`);
  if (url.username || url.password)
    invalid('Destination', 'Destination may not hold credentials: put them in Headers (e.g. Authorization)');
  if (!catalog.allowPrivateDestinations) {
    const reason = refusedHost(url);
    if (reason !== null) {
      throw new ServiceError(
        'InvalidDestination',
        `Destination '${text}' is refused: ${reason}. Private destinations need the service option allowPrivateDestinations`,
        { data: { Destination: reason } },
      );
    }
  }
  return url.href;
}

function secretOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value.replace(/^whsec_/, '') : '';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || Buffer.from(text, 'base64').length === 0) {
    invalid('Secret', 'Secret must be a Standard Webhooks secret: whsec_ followed by base64 (e.g. 24 to 64 random bytes)');
  }
  return value as string;
}

function customPayloadRequestOf(catalog: WebhookCatalog, value: unknown): CustomPayloadRequest | null {
  if (value === undefined || value === null) return null;
  const where = 'CustomPayloadRequest';
  if (typeof value !== 'object' || Array.isArray(value))
    invalid(where, `${where} must be null or an object with ${REQUEST_PROPERTIES.join(', ')}`);
  const f = canonicalFields(value as Entity, REQUEST_PROPERTIES, where);
  if (f.Method !== undefined && f.Method !== null && (typeof f.Method !== 'string' || f.Method.toUpperCase() !== 'GET'))
    invalid(`${where}.Method`, `${where}.Method is always GET`);
  if (typeof f.URI !== 'string' || f.URI.trim() === '') invalid(`${where}.URI`, `${where}.URI must be a local URI such as /Person/Id=1`);
  if (isAbsolute(f.URI.trim())) invalid(`${where}.URI`, `${where}.URI must be local (relative), e.g. /Person/Id=1`);
  const body = f.Body ?? null;
  if (body !== null && !isEntityBody(body)) {
    invalid(`${where}.Body`, `${where}.Body must be an object or an array of objects`);
  }
  return {
    Method: 'GET',
    URI: checkLocalUri(catalog, f.URI.trim(), `${where}.URI`),
    Headers: headersOf(f.Headers, `${where}.Headers`),
    Body: body,
    BreakOnError: booleanOf(f.BreakOnError, `${where}.BreakOnError`, false),
    BreakOnNoContent: booleanOf(f.BreakOnNoContent, `${where}.BreakOnNoContent`, false),
  };
}

/** What a webhook is checked against on save. */
export interface WebhookCatalog extends SelectorCatalog {
  readonly protocols: Protocols;
  /** Service option: absolute destinations may name loopback and private addresses. */
  readonly allowPrivateDestinations: boolean;
}

/** Who saves a webhook: its rights and its rows become the webhook's. */
export interface WebhookAuthor {
  /** 403 when the author may not use the method on the resource. */
  authorize(resource: string, method: string): void;
  caller: Caller;
  /** The properties the saving request gave (an update's patch), before the merge with the stored webhook. */
  sent?: Entity;
}

/** Validation on save (beforeWrite); returns the entity to store. */
export function toStoredWebhook(catalog: WebhookCatalog, input: Entity, existing?: Webhook, author?: WebhookAuthor): Webhook {
  const f = canonicalFields(input, PROPERTIES, 'Webhook');
  if (f.Label !== undefined && f.Label !== null && typeof f.Label !== 'string') invalid('Label', 'Label must be a string');
  const method = f.Method ?? 'POST';
  if (typeof method !== 'string' || !(METHODS as readonly string[]).includes(method.toUpperCase()))
    invalid('Method', `Method must be one of ${METHODS.join(', ')}`);
  const destination = destinationOf(catalog, f.Destination);
  const given = customPayloadRequestOf(catalog, f.CustomPayloadRequest);
  // A stored credential goes only where it went when it was given (docs/security.md#webhooks).
  const redirected = existing !== undefined && redirects(existing, method.toUpperCase(), destination, given);
  const sent = author?.sent === undefined ? undefined : canonicalFields(author.sent, PROPERTIES, 'Webhook');
  const headers = keptCredentials(headersOf(f.Headers, 'Headers'), existing?.Headers, redirected, sent);
  const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  if (contentType !== undefined) {
    try {
      catalog.protocols.forAccept(contentType);
    } catch (e) {
      invalid('Headers', `Headers: the Content-Type '${contentType}' cannot be written: ${(e as Error).message}`);
    }
  }
  const compiled = compileSelector(catalog, f.EventSelector as string);
  // A webhook never borrows rights (docs/api-keys.md): it delivers what its author may read.
  const source = eventSource(catalog, compiled.event);
  author?.authorize(source, 'GET');
  if (author !== undefined) {
    // The author's rights on what the webhook writes and reads locally, as a direct request would need.
    if (!isAbsolute(destination)) authorizeLocal(catalog, author, destination, method.toUpperCase());
    if (given !== null) authorizeLocal(catalog, author, given.URI, 'GET');
  }
  const rows = author ? authorRows(catalog, source, author.caller) : null;
  const selector = compiled.text;
  return {
    // Id is read-only: generated on insert, kept on update, whatever the input says.
    Id: typeof existing?.Id === 'string' ? existing.Id : randomUUID(),
    Label: f.Label ?? null,
    Method: method.toUpperCase() as Method,
    Destination: destination,
    EventSelector: selector,
    Headers: headers,
    IsPaused: booleanOf(f.IsPaused, 'IsPaused', false),
    CustomPayloadRequest: given && {
      ...given,
      Headers: keptCredentials(given.Headers, existing?.CustomPayloadRequest?.Headers, redirected, sentRequest(sent)),
    },
    Secret: secretOf(f.Secret),
    // Set by the service on every save, whatever the input says (like Id).
    Rows: rows,
  };
}

/**
 * The author's row rule on the event's resource, kept as conditions text. A predicate
 * rule cannot be stored with the webhook, so such an author may not save one (403)
 * rather than have it deliver rows the rule would hide.
 */
function authorRows(catalog: WebhookCatalog, source: string, caller: Caller): string | null {
  const resource = catalog.resources.find(source);
  if (resource === undefined || resource.kind !== 'EntityResource') return null;
  const rule = resource.rows(caller, 'GET');
  if (rule === null) return null;
  if (rule.text === undefined)
    throw new ServiceError(
      'Forbidden',
      `Your rows of '${source}' are given by a predicate, which a webhook cannot keep: a webhook on its events needs a row rule written as conditions`,
    );
  return rule.text;
}

/** Output form: docs/webhooks.md key order, without the secret. */
export function webhookOutput(w: Webhook): WebhookOutput {
  const r = w.CustomPayloadRequest;
  return {
    Id: w.Id,
    Label: w.Label,
    Method: w.Method,
    Destination: w.Destination,
    EventSelector: w.EventSelector,
    Headers: mask(w.Headers),
    IsPaused: w.IsPaused,
    CustomPayloadRequest: r
      ? {
          Method: 'GET',
          URI: r.URI,
          Headers: mask(r.Headers),
          Body: r.Body,
          BreakOnError: r.BreakOnError,
          BreakOnNoContent: r.BreakOnNoContent,
        }
      : null,
  };
}

const MASK = '*****';

/** Credentials in Headers (Authorization, Cookie...) are shown as *****, like the Secret they are. */
function mask(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = isSecretHeader(name.toLowerCase()) ? MASK : value;
  return out;
}

/** A masked value sent back (GET, edit, PUT) keeps the stored credential. */
function unmask(headers: Record<string, string>, stored: Record<string, string> | undefined): Record<string, string> {
  if (!stored) return headers;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const kept = value === MASK ? Object.entries(stored).find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1] : undefined;
    out[name] = kept ?? value;
  }
  return out;
}

/**
 * The headers to store. Unchanged target: a masked credential sent back keeps the stored
 * one. Changed target (`redirected`): a stored credential is dropped unless this request
 * gives it again in clear; a masked one, or one carried over from storage, is not kept.
 */
function keptCredentials(
  headers: Record<string, string>,
  stored: Record<string, string> | undefined,
  redirected: boolean,
  sent: Record<string, unknown> | undefined,
): Record<string, string> {
  if (!redirected) return unmask(headers, stored);
  // Headers this request did not give are the stored ones, merged in: none of their credentials is kept.
  const given = sent !== undefined && sent.Headers !== undefined && sent.Headers !== null;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (isSecretHeader(name.toLowerCase()) && (!given || value === MASK)) continue;
    out[name] = value;
  }
  return out;
}

/** The custom payload request this save gave, its property names canonical; undefined when it gave none. */
function sentRequest(sent: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const request = sent?.CustomPayloadRequest;
  if (request === undefined || request === null || typeof request !== 'object' || Array.isArray(request)) return undefined;
  try {
    return canonicalFields(request as Entity, REQUEST_PROPERTIES, 'CustomPayloadRequest');
  } catch {
    return undefined;
  }
}

/** Whether a save sends the webhook's data, or reads its payload, elsewhere than the stored webhook did. */
function redirects(existing: Webhook, method: string, destination: string, request: CustomPayloadRequest | null): boolean {
  if (existing.Destination !== destination || existing.Method !== method) return true;
  const before = existing.CustomPayloadRequest;
  if ((before === null) !== (request === null)) return true;
  return (
    before !== null && request !== null && (before.URI !== request.URI || JSON.stringify(before.Body) !== JSON.stringify(request.Body))
  );
}

/** 403 when the author may not use `method` on the resource a local URI names (a macro is checked when it runs). */
function authorizeLocal(catalog: WebhookCatalog, author: WebhookAuthor, uri: string, method: string): void {
  const parsed = parseUri(uri);
  if (parsed.macro || parsed.error) return;
  // checkLocalUri has resolved it on this save: an unknown resource was refused there.
  author.authorize(catalog.resources.resolve(parsed.resource === '' ? 'Service.AvailableResource' : parsed.resource).name, method);
}

/** The resource whose data an event carries: `Person` for `Person.Inserted`, else the event itself. */
export function eventSource(catalog: Pick<SelectorCatalog, 'resources'>, event: string): string {
  const m = /^(.*)\.(Inserted|Updated|Deleted)$/.exec(event);
  const source = m ? catalog.resources.find(m[1]) : undefined;
  return source && source.kind === 'EntityResource' ? source.name : event;
}
