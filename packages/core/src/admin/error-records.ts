import { randomBytes } from 'node:crypto';
import type { Redaction } from '../model/redaction.js';
import { ServiceError } from '../errors.js';
import type { Resource } from '../model/resources.js';
import type { Entity } from '../query/conditions.js';
import { Locator } from '../grammar/locator.js';
import { targetOf, type Storage } from '../storage/storage.js';

export const ERROR_RESOURCE = 'Service.Admin.Error';

/** One failed request (docs/errors.md), secrets redacted. */
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
 * Error records (docs/errors.md): every error response but 401 is stored, newest `max` kept,
 * secrets redacted. The response links to its record through ErrorInfo.
 */
export class ErrorRecords {
  private stored = 0;
  private counter = 0;
  private trimming: Promise<void> = Promise.resolve();
  /**
   * Starts with a letter: an id of digits alone (`123456` + `7`) would be an unquoted number
   * in `id=<id>`, which never equals a string value (docs/uri.md), so the ErrorInfo link
   * would find nothing.
   */
  private readonly prefix = `r${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly storage: Storage,
    private readonly max: number,
    private readonly principalName: (principal: unknown) => string | null | undefined,
    private readonly redaction: Redaction,
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
      Uri: this.redaction.uri(ctx.basePath + ctx.uri),
      Headers: this.redaction.headers(ctx.clientHeaders),
      Body: this.redaction.body(await ctx.bodyTextForRecord(), ctx.clientHeaders['content-type']),
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
