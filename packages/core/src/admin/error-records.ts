import { MAX_NESTING_LIMIT, nestsDeeperThan } from '../content-types/nesting.js';
import { randomBytes } from 'node:crypto';
import { Auth } from '../model/api-keys.js';
import { ServiceError } from '../errors.js';
import type { Resource } from '../model/resources.js';
import type { Entity } from '../query/conditions.js';
import { Locator } from '../grammar/locator.js';
import { targetOf, type Storage } from '../storage/storage.js';

export const ERROR_RESOURCE = 'Service.Admin.Error';

/** One failed request (SPEC 2.5), secrets redacted. */
export type ErrorRecord = {
  Id: string;
  /** When the request arrived (ISO 8601). */
  Time: string;
  ResourceName: string;
  Action: string;
  Method: string;
  ErrorCode: string;
  StackTrace: string;
  Message: string;
  Uri: string;
  Headers: string;
  Body: string;
  /** Who made the request (AdminOptions.principalName), for row rules such as `Principal=ann`; null when unknown. */
  Principal: string | null;
};

/** What an Error record keeps of the request that failed (request/context.ts's RequestContext is one). */
export interface FailedRequest {
  readonly time: Date;
  readonly resource: Resource | null;
  readonly method: string;
  readonly basePath: string;
  readonly uri: string;
  readonly clientHeaders: Readonly<Record<string, string>>;
  /** Who made it (undefined before authentication). */
  readonly principal: unknown;
  bodyTextForRecord(): Promise<string>;
}

/**
 * Error records (SPEC 2.5): every error response but 401 is stored, newest `max` kept,
 * secrets redacted. The response links to its record through ErrorInfo.
 */
export class ErrorRecords {
  private stored = 0;
  private counter = 0;
  private trimming: Promise<void> = Promise.resolve();
  private readonly prefix = randomBytes(3).toString('hex');

  constructor(
    private readonly storage: Storage,
    private readonly max: number,
    private readonly principalName: (principal: unknown) => string | null | undefined,
  ) {}

  async record(ctx: FailedRequest, error: ServiceError): Promise<string> {
    const id = `${this.prefix}${(++this.counter).toString(36)}`;
    const entity: ErrorRecord = {
      Id: id,
      Time: ctx.time.toISOString(),
      ResourceName: ctx.resource?.name ?? '<unknown>',
      Action: ctx.method,
      Method: ctx.method,
      ErrorCode: error.code,
      StackTrace: error.stack ?? '',
      Message: error.message,
      Uri: redactUri(ctx.basePath + ctx.uri),
      Headers: renderHeaders(ctx.clientHeaders),
      Body: truncate(redactBody(await ctx.bodyTextForRecord(), ctx.clientHeaders['content-type']), MAX_BODY_TEXT),
      Principal: this.nameOf(ctx.principal),
    };
    await this.storage.write({ insert: [entity] });
    // Instances sharing the storage all write records: the cap is on what is stored, so
    // count it when the storage can (a cheap query on a table kept at `max` rows).
    this.stored = this.storage.count ? await this.storage.count({ conditions: [], predicate: null }) : this.stored + 1;
    if (this.stored > this.max) {
      // One trim at a time: concurrent trims pick the same oldest records and the second
      // delete fails. The record is stored either way, so a failed trim must not lose its link.
      this.trimming = this.trimming.then(() => this.trim()).catch(() => undefined);
      await this.trimming;
    }
    return id;
  }

  private nameOf(principal: unknown): string | null {
    if (principal === undefined) return null;
    try {
      const name = this.principalName(principal);
      return typeof name === 'string' ? name : null;
    } catch {
      return null;
    }
  }

  private async trim(): Promise<void> {
    // Records deleted through the resource make the counter run high: count again when the storage can.
    if (this.storage.count) this.stored = await this.storage.count({ conditions: [], predicate: null });
    const excess = this.stored - this.max;
    if (excess <= 0) return;
    const { entities } = await this.storage.select({
      conditions: [],
      predicate: null,
      order: { locator: new Locator('Time'), descending: false },
      offset: 0,
      limit: excess,
    });
    const oldest: Entity[] = [];
    for await (const e of entities as AsyncIterable<Entity>) oldest.push(e);
    await this.storage.write({ delete: oldest.slice(0, excess).map((e) => targetOf(this.storage, e)) });
    this.stored -= Math.min(excess, oldest.length);
  }
}

const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|secret|password|passwd|api[-_]?key|token|access[-_]?token|client[-_]?secret)$/i;

/** How much of a failed request's body a record keeps. */
const MAX_BODY_TEXT = 16384;

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}... (${text.length} characters)` : text;
}

/**
 * The body with the values of credential-like properties replaced by *****: at any depth
 * of a JSON body, and in a form-encoded body. Redacted before truncation, so a long body
 * cannot hide a secret past the cut.
 */
export function redactBody(text: string, contentType = ''): string {
  if (text === '') return text;
  if (/^\s*[[{]/.test(text)) return redactJson(text);
  if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
    const form = new URLSearchParams(text);
    let changed = false;
    for (const key of [...form.keys()])
      if (SECRET_KEY.test(key)) {
        form.set(key, '*****');
        changed = true;
      }
    return changed ? form.toString() : text;
  }
  return text;
}

/** Credential-like query parameters (`?apikey=...`) in a URI, their values replaced by *****. */
export function redactUri(uri: string): string {
  const q = uri.indexOf('?');
  if (q < 0) return uri;
  return (
    uri.slice(0, q) +
    uri.slice(q).replace(/([?&;])([^=&;]*)=([^&;]*)/g, (m, sep: string, key: string) => {
      const name = decodeSafe(key);
      return SECRET_KEY.test(name) || SECRET_QUERY.test(name) ? `${sep}${key}=*****` : m;
    })
  );
}

const SECRET_QUERY = /^(api[-_]?key|key|token|access[-_]?token|auth|password|secret|signature|sig)$/i;

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Values of credential-like properties in text that is not valid JSON: `"password": "x"` -> `"password": "*****"`. */
function redactMalformedJson(text: string): string {
  return text.replace(/("((?:[^"\\]|\\.)*)"\s*:\s*)("(?:[^"\\]|\\.)*"?|[^,}\]\s]+)/g, (m, head: string, key: string) =>
    SECRET_KEY.test(key) ? `${head}"*****"` : m,
  );
}

function redactJson(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return redactMalformedJson(text);
  }
  // A body too deep to walk safely is described, not stored (the service refuses it anyway).
  if (nestsDeeperThan(value, MAX_NESTING_LIMIT))
    return `<${text.length} characters of JSON nested deeper than ${MAX_NESTING_LIMIT} levels: not stored>`;
  let changed = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (SECRET_KEY.test(k) && x !== null && x !== '') {
        out[k] = '*****';
        changed = true;
      } else out[k] = walk(x);
    }
    return out;
  };
  const redacted = walk(value);
  return changed ? JSON.stringify(redacted) : text;
}

/** `<name>: <value>` joined with ` | `, credentials replaced by *****. */
export function renderHeaders(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(
      ([name, value]) =>
        `${name}: ${Auth.isSecretHeader(name) ? '*****' : name === 'source' || name === 'destination' ? Auth.redactInline(value) : value}`,
    )
    .join(' | ');
}
