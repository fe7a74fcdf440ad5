import { ServiceError } from '../errors.js';
import type { Entity, Predicate } from '../query/conditions.js';
import type { Events } from '../webhooks/events.js';
import { select, type EventSelector } from '../webhooks/selector.js';
import { MemoryStreamLog, type Backlog, type LoggedEvent, type Retention, type StreamLog } from './log.js';
import { Outlet } from './outlet.js';

/** Event streams (Server-Sent Events): retention for resuming, heartbeats and limits (docs/limits.md). */
export interface StreamOptions {
  /** How long events are kept for `Last-Event-ID` (default 5 minutes). */
  retentionMs?: number;
  /** How many events are kept for `Last-Event-ID` (default 10,000). */
  retentionEvents?: number;
  /** A comment line this often keeps idle streams open through proxies (default 15 s). */
  heartbeatMs?: number;
  /** Open streams in this process (default 10,000); past it 429. */
  maxStreams?: number;
  /** Open streams of one principal in this process (default 16); past it 429. Unauthenticated callers count only towards `maxStreams`. */
  maxStreamsPerPrincipal?: number;
  /** Bytes a stream may have waiting for a slow client (default 1 MiB); past it the stream ends with `event: closed`. */
  maxBufferBytes?: number;
  /** A log shared by instances (`sqlStreamLog` of `@resourcery/sql`); default: this process's memory. */
  log?: (retention: Retention) => StreamLog;
}

export type ResolvedStreamOptions = Required<Omit<StreamOptions, 'log'>>;

function resolveStreamOptions(options: StreamOptions = {}): ResolvedStreamOptions {
  const resolved = {
    retentionMs: options.retentionMs ?? 5 * 60_000,
    retentionEvents: options.retentionEvents ?? 10_000,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    maxStreams: options.maxStreams ?? 10_000,
    maxStreamsPerPrincipal: options.maxStreamsPerPrincipal ?? 16,
    maxBufferBytes: options.maxBufferBytes ?? 1024 * 1024,
  };
  for (const [name, value] of Object.entries(resolved))
    if (typeof value !== 'number' || !(value >= (name === 'retentionMs' || name === 'retentionEvents' ? 0 : 1)))
      throw new Error(`streams.${name} must be a positive number, not ${String(value)}`);
  return resolved;
}

/** One subscription: what it selects and which rows its caller may read. */
export interface StreamRequest {
  selector: EventSelector;
  /** The caller's row rule on the event's resource (its `test`); null for every row. */
  rows: Predicate | null;
  principal: unknown;
  /** The `Last-Event-ID` header: resume after it. */
  lastEventId?: string;
}

const HEARTBEAT = ':\n\n';

/**
 * The event streams of a service (docs/events.md, "Streaming events"): every raised event
 * goes into the log, and from the log to each open stream whose selector it matches,
 * filtered by the subscriber's rows, as a webhook's deliveries are.
 */
export class EventStreams {
  readonly options: ResolvedStreamOptions;
  private readonly log: StreamLog;
  /** Open streams by the event they select. */
  private readonly byEvent = new Map<string, Set<Stream>>();
  private count = 0;
  private readonly perPrincipal = new Map<unknown, number>();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  /** The memory log keeps events once streams are used; a shared log always does (another instance may stream them). */
  private logging: boolean;
  private closed = false;

  constructor(events: Events, options: StreamOptions = {}) {
    this.options = resolveStreamOptions(options);
    this.log = options.log ? options.log(this.options) : new MemoryStreamLog(this.options);
    this.logging = options.log !== undefined;
    this.log.listen((event) => this.deliver(event));
    events.subscribe((event) => (this.logging ? this.log.append(event) : undefined));
  }

  /** Opens a stream: its body, or 429 past the limits. */
  open(request: StreamRequest): AsyncIterableIterator<string> {
    if (this.closed) throw new ServiceError('Unknown', 'The service is closed');
    const key = principalKey(request.principal);
    const mine = key === undefined ? 0 : (this.perPrincipal.get(key) ?? 0);
    if (this.count >= this.options.maxStreams)
      throw new ServiceError('TooManyRequests', `This service has ${this.count} event streams open, its limit (maxStreams)`);
    if (key !== undefined && mine >= this.options.maxStreamsPerPrincipal)
      throw new ServiceError(
        'TooManyRequests',
        `You have ${mine} event streams open, the limit per caller (maxStreamsPerPrincipal); close one first`,
      );
    this.logging = true;
    this.count++;
    if (key !== undefined) this.perPrincipal.set(key, mine + 1);
    const stream = new Stream(request, this.options.maxBufferBytes, () => this.remove(stream, key));
    let streams = this.byEvent.get(request.selector.event);
    if (streams === undefined) this.byEvent.set(request.selector.event, (streams = new Set()));
    streams.add(stream);
    this.heartbeat ??= setInterval(() => this.beat(), this.options.heartbeatMs).unref();
    stream.outlet.push(': ok\n\n');
    if (request.lastEventId !== undefined) stream.resume(this.log.latest(), this.log.after(request.lastEventId));
    return stream.outlet;
  }

  /** Open streams (all, or one principal's). */
  opened(principal?: unknown): number {
    if (principal === undefined) return this.count;
    return this.perPrincipal.get(principalKey(principal)) ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const streams of this.byEvent.values()) for (const stream of streams) stream.outlet.end();
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    await this.log.close?.();
  }

  private deliver(event: LoggedEvent): void {
    const streams = this.byEvent.get(event.name);
    if (streams !== undefined) for (const stream of streams) stream.offer(event);
  }

  private beat(): void {
    for (const streams of this.byEvent.values()) for (const stream of streams) stream.outlet.push(HEARTBEAT);
  }

  private remove(stream: Stream, key: unknown): void {
    const streams = this.byEvent.get(stream.event);
    if (streams?.delete(stream) !== true) return;
    if (streams.size === 0) this.byEvent.delete(stream.event);
    this.count--;
    if (key !== undefined) {
      const n = (this.perPrincipal.get(key) ?? 1) - 1;
      if (n === 0) this.perPrincipal.delete(key);
      else this.perPrincipal.set(key, n);
    }
    if (this.count === 0) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }
}

/** One open stream: its filter, its place in the log, its body. */
class Stream {
  readonly outlet: Outlet;
  readonly event: string;
  /** The newest event this stream has taken: never sent twice (a resume overlaps live events). */
  private lastSeq = -1;
  /** Live events that came while the backlog was read. */
  private pending: LoggedEvent[] | null = null;

  constructor(
    private readonly request: StreamRequest,
    maxBufferBytes: number,
    onClose: () => void,
  ) {
    this.event = request.selector.event;
    this.outlet = new Outlet(maxBufferBytes, onClose, () =>
      message(undefined, 'closed', JSON.stringify({ Reason: 'SlowConsumer', Message: SLOW })),
    );
  }

  resume(latest: string | undefined, backlog: Backlog | Promise<Backlog>): void {
    if (!(backlog instanceof Promise)) return this.replay(latest, backlog);
    this.pending = [];
    backlog.then(
      (events) => this.replay(latest, events),
      () => this.replay(latest, 'reset'),
    );
  }

  offer(event: LoggedEvent): void {
    if (this.pending !== null) this.pending.push(event);
    else this.send(event);
  }

  private replay(latest: string | undefined, backlog: Backlog): void {
    const pending = this.pending ?? [];
    this.pending = null;
    if (backlog === 'reset') this.outlet.push(message(latest ?? '', 'reset', JSON.stringify({ Reason: RESET })));
    else {
      // The client has everything up to its id, whichever instance sent it.
      this.lastSeq = Math.max(this.lastSeq, backlog.after);
      for (const event of backlog.events) this.send(event);
    }
    for (const event of pending) this.send(event);
  }

  private send(event: LoggedEvent): void {
    if (event.seq <= this.lastSeq || !this.outlet.open) return;
    this.lastSeq = event.seq;
    const data = this.data(event);
    if (data !== null) this.outlet.push(message(event.id, event.name, data));
  }

  /** The message's data, or null when nothing in the event is for this subscriber. */
  private data(event: LoggedEvent): string | null {
    const { selector, rows } = this.request;
    let selected = select(selector, event);
    if (selected === 'binary') return binaryData(event);
    // Only the rows the subscriber may read (model/rules.ts), as a webhook delivers its author's.
    if (rows !== null && selected !== null) selected = selected.filter((e) => visible(rows, e));
    if (selected === null || selected.length === 0) return null;
    return selected.length === event.entities!.length ? wholeData(event) : JSON.stringify(selected);
  }
}

const SLOW = 'This stream fell too far behind (maxBufferBytes) and was closed; reconnect with Last-Event-ID to resume';
const RESET = 'The events after your Last-Event-ID are no longer kept: the stream starts from now';

function message(id: string | undefined, event: string, data: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${data}\n\n`;
}

function visible(rows: Predicate, entity: Entity): boolean {
  try {
    return rows(entity);
  } catch {
    return false;
  }
}

/** The JSON of a whole entity payload, made once however many streams send it. */
const whole = new WeakMap<LoggedEvent, string>();

function wholeData(event: LoggedEvent): string {
  let data = whole.get(event);
  if (data === undefined) whole.set(event, (data = JSON.stringify(event.entities)));
  return data;
}

function binaryData(event: LoggedEvent): string {
  let data = whole.get(event);
  if (data === undefined) {
    const { contentType, body } = event.binary!;
    data = JSON.stringify({
      ContentType: contentType,
      Base64: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64'),
    });
    whole.set(event, data);
  }
  return data;
}

/** Ids of principals that are instances of a class (an ApiKeyPrincipal is one per key). */
const objectKeys = new WeakMap<object, number>();
let nextKey = 0;

/**
 * What counts one principal's streams: the principal itself for a string or number, its
 * JSON for a plain object (a fresh `{ user: 'ann' }` per request is still ann), the object
 * for any other. Undefined (no authentication) has no per-principal count.
 */
function principalKey(principal: unknown): unknown {
  if (principal === undefined || principal === null) return undefined;
  if (typeof principal === 'string' || typeof principal === 'number' || typeof principal === 'boolean' || typeof principal === 'bigint')
    return `${typeof principal}:${principal}`;
  if (typeof principal !== 'object') return principal; // a symbol or a function: itself
  const proto: unknown = Object.getPrototypeOf(principal);
  if (proto === Object.prototype || proto === null) {
    try {
      return `json:${JSON.stringify(principal)}`;
    } catch {
      // Not JSON (a cycle): counted as the object itself.
    }
  }
  let key = objectKeys.get(principal);
  if (key === undefined) objectKeys.set(principal, (key = ++nextKey));
  return key;
}
