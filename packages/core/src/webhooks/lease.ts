import { ServiceError } from '../errors.js';
import type { Outbox, OutboxMessage } from './outbox.js';

/**
 * The outbox messages one instance holds, as last stored, and their leases
 * (docs/webhooks.md): `renew` (the heartbeat) pushes the lease of every message that is
 * due or being sent `leaseMs` ahead, so that another instance takes a message over only
 * once this one stopped renewing it (it died, or lost the database). Writes of one
 * message run one after another, each on the version the previous one stored.
 */
export class HeldMessages {
  private readonly held = new Map<string, OutboxMessage>();
  private readonly lanes = new Map<string, Promise<void>>();

  constructor(
    private readonly outbox: Outbox,
    private readonly leaseMs: number,
  ) {}

  has(id: string): boolean {
    return this.held.has(id);
  }

  /** The message as last stored, while held. */
  get(id: string): OutboxMessage | undefined {
    return this.held.get(id);
  }

  /** Holds a message as stored. */
  set(message: OutboxMessage): void {
    this.held.set(message.Id, message);
  }

  delete(id: string): void {
    this.held.delete(id);
  }

  values(): OutboxMessage[] {
    return [...this.held.values()];
  }

  /** Runs `change` on the message as last stored, after the writes of it before; not once it is no longer held. */
  write(id: string, change: (current: OutboxMessage) => Promise<void>): Promise<void> {
    const next = (this.lanes.get(id) ?? Promise.resolve()).then(() => {
      const current = this.held.get(id);
      return current === undefined ? undefined : change(current);
    });
    const lane = next.catch(() => undefined);
    this.lanes.set(id, lane);
    void lane.then(() => {
      if (this.lanes.get(id) === lane) this.lanes.delete(id);
    });
    return next;
  }

  /**
   * The heartbeat: every held message whose lease ends within `leaseMs` (it is due or
   * being sent; one waiting for a later retry is leased past its due time already) is
   * leased `leaseMs` from now. A message changed elsewhere (taken over, its webhook
   * deleted) is no longer held; `lost` hears of it. Other failures (the database is
   * down) keep it held: the next beat tries again.
   */
  renew(lost: (message: OutboxMessage) => void, failed: (error: unknown) => void): void {
    const now = Date.now();
    for (const message of this.held.values()) {
      if (message.LockedUntil > now + this.leaseMs) continue;
      this.write(message.Id, async (current) => {
        try {
          this.held.set(current.Id, await this.outbox.update(current, { ...current, LockedUntil: Date.now() + this.leaseMs }));
        } catch (e) {
          if (!ServiceError.is(e) || e.code !== 'Conflict') throw e;
          this.held.delete(current.Id);
          lost(current);
        }
      }).catch(failed);
    }
  }

  /** Resolves once no write of a held message is running. */
  async settled(): Promise<void> {
    while (this.lanes.size > 0) await Promise.allSettled([...this.lanes.values()]);
  }
}
