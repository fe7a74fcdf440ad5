import type { Condition } from '../grammar/parse.js';
import { compileConditions, type Entity } from '../query/conditions.js';
import { parseLiteral } from '../grammar/literal.js';
import { Locator } from '../grammar/locator.js';
import { compareValues } from '../query/order.js';
import { SELECT_ALL, targetOf, type Storage, type WriteBatch } from '../storage/storage.js';

export const OUTBOX_STORAGE = 'Service.Admin.WebhookOutbox';

/**
 * One delivery owed to one webhook. It is stored before the request that raised the
 * event answers and removed only once delivered or given up, so a crash or restart
 * loses nothing (at-least-once). `LockedUntil` is the lease of the instance working on
 * it: instances that share the storage leave leased messages alone.
 */
export type OutboxMessage = {
  /** Sent as `webhook-id`: the same on every attempt. */
  Id: string;
  WebhookId: string;
  Event: string;
  /** When the event was raised (ISO 8601). */
  Time: string;
  /** Local-request depth of the raising request (stops webhook loops). */
  Depth: number;
  /**
   * The client request the event descends from, and how many requests it had caused when
   * the message was written: what all its messages cause counts against one bound (outgoing/origin.ts).
   * Absent in messages written before the bound existed.
   */
  Origin?: string;
  Caused?: number;
  Entities: Entity[] | null;
  /** A binary payload: its Content-Type and its bytes in base64. */
  Binary: { ContentType: string; Body: string } | null;
  /** Attempts made so far. */
  Attempt: number;
  /** Epoch milliseconds of the next attempt. */
  DueAt: number;
  /** Epoch milliseconds until which an instance holds the message. */
  LockedUntil: number;
};

interface Pending {
  batch: Required<Pick<WriteBatch, 'update' | 'delete'>>;
  waiters: Array<{ op: WriteBatch; resolve: () => void; reject: (e: unknown) => void }>;
}

/** The outbox over any Storage; updates and deletes of one tick share one write. */
export class Outbox {
  private pending: Pending | null = null;

  constructor(readonly storage: Storage) {}

  /** Replaces a message; resolves to the stored value. */
  async update(target: OutboxMessage, value: OutboxMessage): Promise<OutboxMessage> {
    await this.enqueue({ update: [{ target: targetOf(this.storage, target), value }] });
    return value;
  }

  remove(target: OutboxMessage): Promise<void> {
    return this.enqueue({ delete: [targetOf(this.storage, target)] });
  }

  /** Takes a message no instance holds; null when another instance was quicker. */
  async claim(message: OutboxMessage, until: number): Promise<OutboxMessage | null> {
    const value = { ...message, LockedUntil: until };
    try {
      await this.storage.write({
        update: [{ target: targetOf(this.storage, message), value }],
      });
      return value;
    } catch {
      return null;
    }
  }

  /** How many messages the outbox holds (every instance's, when they share its storage). */
  async depth(): Promise<number> {
    if (this.storage.count) return this.storage.count({ conditions: [], predicate: null });
    let n = 0;
    for await (const e of (await this.storage.select(SELECT_ALL)).entities as AsyncIterable<Entity>) if (isOutboxMessage(e)) n++;
    return n;
  }

  /** Messages whose lease has run out (left by a stopped instance), earliest due first. */
  async unleased(now: number, limit: number): Promise<OutboxMessage[]> {
    const conditions: Condition[] = [
      { locator: new Locator('LockedUntil'), op: '<=', value: parseLiteral(String(now)), text: `LockedUntil<=${now}` },
    ];
    const predicate = compileConditions(conditions);
    const order = { locator: new Locator('DueAt'), descending: false };
    const result = await this.storage.select({ conditions, predicate, order, offset: 0, limit });
    let found: OutboxMessage[] = [];
    for await (const e of result.entities as AsyncIterable<Entity>) {
      if ((result.conditionsApplied || predicate!(e)) && isOutboxMessage(e)) found.push(e);
    }
    if (!result.pagingApplied) found = found.sort((a, b) => compareValues(a.DueAt, b.DueAt)).slice(0, limit);
    return found;
  }

  private enqueue(op: WriteBatch): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.pending === null) {
        this.pending = { batch: { update: [], delete: [] }, waiters: [] };
        setImmediate(() => void this.flush());
      }
      // Loops, not push(...): a spread of a caller-sized array overflows the stack (docs/limits.md).
      for (const u of op.update ?? []) this.pending.batch.update.push(u);
      for (const d of op.delete ?? []) this.pending.batch.delete.push(d);
      this.pending.waiters.push({ op, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const { batch, waiters } = this.pending!;
    this.pending = null;
    try {
      await this.storage.write(batch);
      for (const w of waiters) w.resolve();
    } catch {
      // One stale target fails the whole batch: write each change alone instead.
      for (const w of waiters) {
        try {
          await this.storage.write(w.op);
          w.resolve();
        } catch (e) {
          w.reject(e);
        }
      }
    }
  }
}

/** Whether a stored entity is an outbox message (kept as the very object storage returned: writes address it). */
function isOutboxMessage(e: Entity): e is Entity & OutboxMessage {
  const number = (v: unknown) => typeof v === 'number';
  return (
    typeof e.Id === 'string' &&
    typeof e.WebhookId === 'string' &&
    typeof e.Event === 'string' &&
    typeof e.Time === 'string' &&
    number(e.Depth) &&
    number(e.Attempt) &&
    number(e.DueAt) &&
    number(e.LockedUntil)
  );
}
