import { randomBytes } from 'node:crypto';
import type { Entity } from '../query/conditions.js';
import type { RaisedEvent } from '../webhooks/events.js';

/** One event as event streams keep it: a resumable id, its place in the log, its payload. */
export interface LoggedEvent {
  /** What a stream sends as `id:` and a client sends back as `Last-Event-ID`. */
  readonly id: string;
  /** Order in the log: higher is later. */
  readonly seq: number;
  readonly name: string;
  readonly time: number;
  readonly entities?: Entity[];
  readonly binary?: { contentType: string; body: Uint8Array };
}

/**
 * The events after a Last-Event-ID (`after`: that id's seq; later events come live), or
 * `reset` when some of them are no longer retained (or the id is not this log's).
 */
export type Backlog = { after: number; events: LoggedEvent[] } | 'reset';

/**
 * Where event streams take their events from (docs/events.md, "Streaming events"): every
 * event raised, in one order, with the recent ones kept for `Last-Event-ID`. The memory log
 * serves one process; a shared log (`@resourcery/sql`'s) lets instances that share a
 * database see each other's events.
 */
export interface StreamLog {
  /** Takes an event raised here; resolves once it is logged (and will reach listeners). */
  append(event: RaisedEvent): void | Promise<void>;
  /** Hears every logged event, from any instance, in log order. */
  listen(listener: (event: LoggedEvent) => void): void;
  /** The retained events after `id`, or `reset`. */
  after(id: string): Backlog | Promise<Backlog>;
  /** The id of the newest event this log has handed its listener (sent with a reset, so that the next resume starts there); undefined when none. */
  latest(): string | undefined;
  close?(): void | Promise<void>;
}

/** How much of the recent past a log keeps for resuming. */
export interface Retention {
  /** Oldest event kept, in milliseconds (default 5 minutes). */
  retentionMs: number;
  /** Most events kept (default 10,000). */
  retentionEvents: number;
}

/**
 * The log of one process: events numbered as they are raised, the newest kept in memory
 * within the retention. Ids carry a per-process prefix, so an id from another process (or
 * before a restart) resets rather than resuming at a number that means something else.
 */
export class MemoryStreamLog implements StreamLog {
  private readonly prefix = randomBytes(4).toString('hex');
  private readonly events: LoggedEvent[] = [];
  /** Index of the oldest kept event in `events` (dropped ones are compacted away in batches). */
  private head = 0;
  private seq = 0;
  /** The highest seq no longer kept. */
  private dropped = 0;
  private listener: (event: LoggedEvent) => void = () => {};

  constructor(private readonly retention: Retention) {}

  append(event: RaisedEvent): void {
    const seq = ++this.seq;
    const logged: LoggedEvent = {
      id: `${this.prefix}-${seq}`,
      seq,
      name: event.name,
      time: event.time.getTime(),
      entities: event.entities,
      binary: event.binary,
    };
    this.events.push(logged);
    this.trim(logged.time);
    this.listener(logged);
  }

  listen(listener: (event: LoggedEvent) => void): void {
    this.listener = listener;
  }

  after(id: string): Backlog {
    const dash = id.lastIndexOf('-');
    const seq = Number(id.slice(dash + 1));
    if (dash < 0 || id.slice(0, dash) !== this.prefix || !Number.isSafeInteger(seq) || seq < 0 || seq > this.seq) return 'reset';
    this.trim(Date.now());
    if (seq < this.dropped) return 'reset';
    const events: LoggedEvent[] = [];
    for (let i = this.head; i < this.events.length; i++) if (this.events[i].seq > seq) events.push(this.events[i]);
    return { after: seq, events };
  }

  latest(): string | undefined {
    return this.seq === 0 ? undefined : `${this.prefix}-${this.seq}`;
  }

  private trim(now: number): void {
    const { retentionMs, retentionEvents } = this.retention;
    while (this.head < this.events.length) {
      const oldest = this.events[this.head];
      if (this.events.length - this.head <= retentionEvents && now - oldest.time <= retentionMs) break;
      this.dropped = oldest.seq;
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.events.length) {
      this.events.splice(0, this.head);
      this.head = 0;
    }
  }
}
