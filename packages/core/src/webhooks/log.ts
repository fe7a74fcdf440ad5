import type { Entity } from '../query/conditions.js';
import { Locator } from '../grammar/locator.js';
import { compareValues } from '../query/order.js';
import type { JsonSchema } from '../query/schema-types.js';
import { targetOf, type Storage } from '../storage/storage.js';

export const LOG_RESOURCE = 'Service.Admin.WebhookLog';

/** One row per delivery attempt (docs/webhooks.md). */
export type DeliveryAttempt = {
  /** When the attempt started (ISO 8601, UTC). */
  Time: string;
  WebhookId: string;
  /** The `webhook-id` of the message: the same on every attempt of one message. */
  MessageId: string;
  Event: string;
  /** 1 for the first attempt. */
  Attempt: number;
  /** HTTP status of the answer; null when there was none (network error, timeout, abort). */
  Status: number | null;
  Success: boolean;
  DurationMs: number;
  Error: string | null;
};

export const LOG_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    Time: { type: 'string' },
    WebhookId: { type: 'string' },
    MessageId: { type: 'string' },
    Event: { type: 'string' },
    Attempt: { type: 'integer' },
    Status: { type: ['integer', 'null'] },
    Success: { type: 'boolean' },
    DurationMs: { type: 'number' },
    Error: { type: ['string', 'null'] },
  },
};

/** The attempt log, bounded to the newest `max` rows like the error records. */
export class DeliveryLog {
  private stored: number | null = null;
  private trimming: Promise<void> | null = null;

  constructor(
    readonly storage: Storage,
    private readonly max: number,
  ) {}

  async record(row: DeliveryAttempt): Promise<void> {
    await this.storage.write({ insert: [row] });
    if (this.stored === null) this.stored = await this.count();
    else this.stored++;
    // Trim in steps of a tenth so that a full log is not rewritten on every attempt.
    if (this.stored > this.max + Math.max(1, Math.floor(this.max / 10))) {
      this.trimming ??= this.trim().finally(() => {
        this.trimming = null;
      });
      await this.trimming;
    }
  }

  private async count(): Promise<number> {
    const all = { conditions: [], predicate: null };
    if (this.storage.count) return this.storage.count(all);
    return (await this.rows()).length;
  }

  private async rows(): Promise<Entity[]> {
    const result = await this.storage.select({
      conditions: [],
      predicate: null,
      order: { locator: new Locator('Time'), descending: false },
      offset: 0,
      limit: -1,
    });
    const rows: Entity[] = [];
    for await (const e of result.entities as AsyncIterable<Entity>) rows.push(e);
    return result.pagingApplied ? rows : rows.sort((a, b) => compareValues(a.Time, b.Time));
  }

  private async trim(): Promise<void> {
    try {
      const rows = await this.rows();
      const excess = rows.length - this.max;
      if (excess > 0) await this.storage.write({ delete: rows.slice(0, excess).map((e) => targetOf(this.storage, e)) });
      this.stored = rows.length - Math.max(0, excess);
    } catch {
      // Rows deleted meanwhile (through the resource): count again next time.
      this.stored = null;
    }
  }
}
