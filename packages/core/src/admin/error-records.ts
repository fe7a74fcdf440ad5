import { randomBytes } from 'node:crypto';
import type { RecordBody, Redaction } from '../model/redaction.js';
import { ServiceError } from '../errors.js';
import type { Resource } from '../model/resources.js';
import type { Entity } from '../query/conditions.js';
import { Locator } from '../grammar/locator.js';
import { SELECT_ALL, targetOf, type Storage } from '../storage/storage.js';

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
  bodyForRecord(): Promise<RecordBody>;
}

/** Bounds of the Error record store (docs/limits.md). */
export interface ErrorRecordBounds {
  /** Most records kept. */
  readonly count: number;
  /** Most characters kept in all records together (every text property counted). */
  readonly chars: number;
  /** The part of either bound one principal may hold once the store is full (0 to 1). */
  readonly share: number;
}

/** What the store knows of one record: who it was for and how large it is. */
interface Entry {
  readonly principal: string;
  readonly chars: number;
}

/** Who holds how much of the store. */
interface Holding {
  count: number;
  chars: number;
}

/** The principal key of records whose request had no principal. */
const ANONYMOUS = '\u0000anonymous';

/**
 * Error records (docs/errors.md): every error response but 401 is stored, secrets redacted,
 * within bounds on count and characters. When a bound is crossed, the oldest record of the
 * principal holding most past its share goes first; while nobody is past it, the oldest
 * overall. So one caller flooding the store with failures evicts its own records, not
 * others' (docs/security.md#error-records). The response links to its record through ErrorInfo.
 */
export class ErrorRecords {
  private counter = 0;
  /** Records in the storage, oldest first, as far as this instance knows (null: not read yet). */
  private ledger: Map<string, Entry> | null = null;
  private chars = 0;
  private readonly holdings = new Map<string, Holding>();
  /** Accounting runs one record at a time, so two never evict the same record. */
  private accounting: Promise<void> = Promise.resolve();
  /**
   * Starts with a letter: an id of digits alone (`123456` + `7`) would be an unquoted number
   * in `id=<id>`, which never equals a string value (docs/uri.md), so the ErrorInfo link
   * would find nothing.
   */
  private readonly prefix = `r${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly storage: Storage,
    private readonly bounds: ErrorRecordBounds,
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
      Body: this.redaction.body(await ctx.bodyForRecord(), ctx.clientHeaders['content-type']),
      Principal: this.nameOf(ctx.principal),
    };
    await this.storage.write({ insert: [entity] });
    // The record is stored either way: a failed accounting must not lose its link.
    this.accounting = this.accounting.then(() => this.account(entity)).catch(() => undefined);
    await this.accounting;
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

  private async account(entity: ErrorRecord): Promise<void> {
    if (this.ledger === null) await this.load();
    else this.add(entity);
    // Records deleted through the resource, or written by other instances sharing the
    // storage, make the ledger differ from the storage: read it again (a table kept small).
    if (this.storage.count && (await this.storage.count({ conditions: [], predicate: null })) !== this.ledger!.size) await this.load();
    const victims = this.evict();
    if (victims.size === 0) return;
    // A delete addresses records as the storage returns them: pick those out of one
    // unordered read (no sort, no rebuilt ledger).
    const { entities } = await this.storage.select(SELECT_ALL);
    const stored: Entity[] = [];
    for await (const e of entities as AsyncIterable<Entity>) if (victims.has(e.Id as string)) stored.push(e);
    await this.storage.write({ delete: stored.map((e) => targetOf(this.storage, e)) });
  }

  private async load(): Promise<void> {
    this.ledger = new Map();
    this.chars = 0;
    this.holdings.clear();
    const { entities } = await this.storage.select({
      conditions: [],
      predicate: null,
      order: { locator: new Locator('Time'), descending: false },
      offset: 0,
      limit: -1,
    });
    for await (const e of entities as AsyncIterable<Entity>) this.add(e as unknown as ErrorRecord);
  }

  private add(record: ErrorRecord): void {
    const entry = { principal: record.Principal ?? ANONYMOUS, chars: sizeOf(record) };
    this.ledger!.set(record.Id, entry);
    this.chars += entry.chars;
    const held = this.holdings.get(entry.principal) ?? { count: 0, chars: 0 };
    held.count++;
    held.chars += entry.chars;
    this.holdings.set(entry.principal, held);
  }

  /** Takes records out of the ledger until it is within the bounds; returns their ids. */
  private evict(): Set<string> {
    const ledger = this.ledger!;
    const { count, chars, share } = this.bounds;
    const victims = new Set<string>();
    while (ledger.size > count || (this.chars > chars && ledger.size > 1)) {
      // The principal furthest past its share, if any.
      let worst: string | null = null;
      let most = 1;
      for (const [principal, held] of this.holdings) {
        const part = Math.max(held.count / (count * share), held.chars / (chars * share));
        if (part > most) [worst, most] = [principal, part];
      }
      let victim: string | undefined;
      for (const [id, entry] of ledger)
        if (worst === null || entry.principal === worst) {
          victim = id;
          break;
        }
      const entry = ledger.get(victim!)!;
      ledger.delete(victim!);
      this.chars -= entry.chars;
      const held = this.holdings.get(entry.principal)!;
      held.count--;
      held.chars -= entry.chars;
      if (held.count === 0) this.holdings.delete(entry.principal);
      victims.add(victim!);
    }
    return victims;
  }
}

/** The characters a record keeps: every text property. */
function sizeOf(record: ErrorRecord): number {
  let n = 0;
  for (const value of Object.values(record)) if (typeof value === 'string') n += value.length;
  return n;
}
