import { randomUUID } from 'node:crypto';

/** Default of the service option `maxCausedRequests`. */
export const DEFAULT_MAX_CAUSED = 256;

/**
 * What one client request sets going, however deep and however late: every local request
 * (webhook, Source, Destination, custom payload) and webhook delivery descending from it
 * counts against one bound (`maxCausedRequests`). The depth limit alone caps a chain, not a
 * fan-out: two webhooks feeding their own event double the requests at every level. Through
 * the outbox the origin travels as its id and a count (OutboxMessage.Origin, .Caused).
 */
export class Origin {
  /** Local requests and delivery attempts caused so far. */
  caused = 0;
  /** The ErrorInfo link of the first refusal: one Error record per runaway origin, not one per refusal. */
  refusal: Promise<string | undefined> | undefined;

  constructor(readonly id: string = `org_${randomUUID().replace(/-/g, '')}`) {}

  /** Counts one more request; false (and nothing counted) once `max` were caused. */
  take(max: number): boolean {
    if (this.caused >= max) return false;
    this.caused++;
    return true;
  }
}

/**
 * The origins of the outbox messages a delivery worker holds: messages of one origin share
 * one count while any of them is held, and the origin is let go with its last message.
 */
export class HeldOrigins {
  private readonly byMessage = new Map<string, Origin>();
  private readonly byId = new Map<string, { origin: Origin; messages: number }>();

  /**
   * The origin of a message, held until `release`. `live` is the raising request's own
   * origin; a message read back from storage (a restart, another instance) has only its id
   * and the count it was written with, so its count goes on from there.
   */
  hold(messageId: string, originId: string, caused: number, live?: Origin): Origin {
    const held = this.byMessage.get(messageId);
    if (held !== undefined) return held;
    let entry = this.byId.get(originId);
    if (entry === undefined) {
      entry = { origin: live ?? new Origin(originId), messages: 0 };
      this.byId.set(originId, entry);
    }
    entry.origin.caused = Math.max(entry.origin.caused, caused, live?.caused ?? 0);
    entry.messages++;
    this.byMessage.set(messageId, entry.origin);
    return entry.origin;
  }

  of(messageId: string): Origin | undefined {
    return this.byMessage.get(messageId);
  }

  release(messageId: string): void {
    const origin = this.byMessage.get(messageId);
    if (origin === undefined) return;
    this.byMessage.delete(messageId);
    const entry = this.byId.get(origin.id)!;
    if (--entry.messages === 0) this.byId.delete(origin.id);
  }
}
