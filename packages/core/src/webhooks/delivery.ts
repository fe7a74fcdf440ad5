import { createHmac } from 'node:crypto';
import type { PlainResponse } from '../http/types.js';
import { ServiceError } from '../errors.js';
import { HeldOrigins, Origin } from '../outgoing/origin.js';
import type { OutgoingPolicy } from '../outgoing/local-requests.js';
import { send, SendFailure } from '../outgoing/send.js';
import type { DeliveryAttempt, DeliveryLog } from './log.js';
import type { Outbox, OutboxMessage } from './outbox.js';
import { HeldMessages } from './lease.js';
import { collectBody } from '../outgoing/body.js';
import { buildPayload, type PayloadDeps } from './payload.js';
import type { Webhook } from './webhook.js';

export interface WebhookOptions {
  /** Per-attempt timeout in milliseconds (default 10 000). */
  timeoutMs?: number;
  /**
   * Delay before each attempt in milliseconds; its length is the number of attempts.
   * Default: 0 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then the message fails.
   * Every delay but a zero one gets up to ±20 % jitter.
   */
  retrySchedule?: number[];
  /** Deliveries in flight at once (default 32). */
  concurrency?: number;
  /** WebhookLog rows kept, the newest (default 10 000). */
  maxLogRecords?: number;
  /**
   * How long a message stays held by the instance sending it without a renewal (default
   * 10 s). The instance renews it every third of that while the message is due or being
   * sent (a heartbeat); another instance takes it over once the lease ran out.
   */
  leaseMs?: number;
  /** How often to look for messages whose lease ran out: left by a stopped instance (default 5 s). */
  sweepIntervalMs?: number;
}

export const DEFAULT_RETRY_SCHEDULE = [0, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];

export type ResolvedWebhookOptions = Required<WebhookOptions>;

export function resolveWebhookOptions(options: WebhookOptions = {}): ResolvedWebhookOptions {
  const resolved = {
    timeoutMs: 10_000,
    retrySchedule: DEFAULT_RETRY_SCHEDULE,
    concurrency: 32,
    maxLogRecords: 10_000,
    leaseMs: 10_000,
    sweepIntervalMs: 5_000,
    ...options,
  };
  const positive = (n: number) => Number.isFinite(n) && n > 0;
  if (!positive(resolved.timeoutMs)) throw new Error('webhooks.timeoutMs must be a positive number of milliseconds');
  if (
    !Array.isArray(resolved.retrySchedule) ||
    resolved.retrySchedule.length === 0 ||
    resolved.retrySchedule.some((d) => !Number.isFinite(d) || d < 0)
  ) {
    throw new Error('webhooks.retrySchedule must be a non-empty array of delays in milliseconds (>= 0)');
  }
  if (!Number.isInteger(resolved.concurrency) || resolved.concurrency < 1) throw new Error('webhooks.concurrency must be an integer >= 1');
  if (!positive(resolved.maxLogRecords)) throw new Error('webhooks.maxLogRecords must be a positive number');
  if (!positive(resolved.leaseMs)) throw new Error('webhooks.leaseMs must be a positive number of milliseconds');
  if (!positive(resolved.sweepIntervalMs)) throw new Error('webhooks.sweepIntervalMs must be a positive number of milliseconds');
  return resolved;
}

/** The delay before attempt `attempt + 1` (0-based index into the schedule), jittered by at most ±20 %; null when none is left. */
export function retryDelay(schedule: readonly number[], attempt: number, random: () => number = Math.random): number | null {
  if (attempt >= schedule.length) return null;
  return Math.round(schedule[attempt] * (0.8 + 0.4 * random()));
}

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the base64 after `whsec_`. */
export function sign(secret: string, id: string, timestamp: number, body: Uint8Array | null): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const hmac = createHmac('sha256', key).update(`${id}.${timestamp}.`);
  if (body) hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

interface Outcome {
  status: number | null;
  success: boolean;
  error: string | null;
  /** Retrying cannot help (aborted on purpose, refused, webhook gone). */
  final?: boolean;
  /** Interrupted by close(): not an attempt. */
  interrupted?: boolean;
  /** The service's own storage could not say what to send (the database is down): not an attempt either. */
  unavailable?: boolean;
}

/** How soon a message is tried again when the service's own storage could not be read (not an attempt: no back-off). */
const UNAVAILABLE_RETRY_MS = 1_000;

const CLOSED = Symbol('closed');

/**
 * The delivery worker: attempts due messages (at most `concurrency` at once), logs
 * every attempt, schedules retries, and removes a message once it is delivered or
 * given up. Timers are unref'd so that the worker never keeps a process alive.
 */
export class DeliveryWorker {
  private readonly ready: OutboxMessage[] = [];
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Messages this instance holds, as last stored, and their leases. */
  private readonly owned: HeldMessages;
  /** The origins of the messages held, whose bound their deliveries count against. */
  private readonly origins = new HeldOrigins();
  private readonly running = new Set<Promise<void>>();
  private readonly controllers = new Set<AbortController>();
  private idleWaiters: Array<() => void> = [];
  private sweepTimer: NodeJS.Timeout | null = null;
  /** The sweep running, if any: one at a time, and close() waits for it. */
  private sweeping: Promise<void> | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;
  /** How this process's attempts ended (the metrics' resourcery_webhook_deliveries_total, docs/operations.md#metrics). */
  readonly outcomes = { delivered: 0, retrying: 0, givenUp: 0 };

  constructor(
    private readonly deps: PayloadDeps & { readonly outgoing: OutgoingPolicy },
    private readonly outbox: Outbox,
    private readonly log: DeliveryLog,
    private readonly webhooks: {
      find(id: string): Promise<Webhook | undefined>;
      /** Pauses the webhook: its receiver said it is gone for good (410). */
      pause(id: string): Promise<void>;
    },
    readonly options: ResolvedWebhookOptions,
  ) {
    this.owned = new HeldMessages(outbox, options.leaseMs);
  }

  /** How long a message stays held past its due time, or past a renewal, before another instance may take it. */
  get lease(): number {
    return this.options.leaseMs;
  }

  start(): void {
    void this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs);
    this.sweepTimer.unref();
    const lost = (message: OutboxMessage) => this.origins.release(message.Id);
    this.heartbeat = setInterval(() => this.owned.renew(lost, (e) => this.warn(e)), Math.max(1, this.options.leaseMs / 3));
    this.heartbeat.unref();
  }

  /** Takes messages just written to the outbox by this instance for an event of `origin`. */
  accept(messages: OutboxMessage[], origin: Origin): void {
    for (const m of messages) this.take(m, origin);
  }

  /** Holds a message (and its origin) until it is delivered or given up. */
  private take(message: OutboxMessage, live?: Origin): void {
    this.origins.hold(message.Id, message.Origin ?? message.Id, message.Caused ?? 0, live);
    this.schedule(message);
  }

  private drop(message: OutboxMessage): void {
    this.owned.delete(message.Id);
    this.origins.release(message.Id);
  }

  /** Resolves when nothing is due, running or waiting for a retry. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.closed || (this.ready.length === 0 && this.running.size === 0 && this.timers.size === 0);
  }

  private checkIdle(): void {
    if (!this.isIdle()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Holds a message (the object storage returned: writes address it) and attempts it at `dueAt`. */
  private schedule(message: OutboxMessage, dueAt = message.DueAt): void {
    // Held even after close() began, so that close hands it back.
    this.owned.set(message);
    if (this.closed) return;
    const delay = dueAt - Date.now();
    if (delay <= 0) {
      this.ready.push(message);
      this.pump();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(message.Id);
      this.ready.push(message);
      this.pump();
    }, delay);
    timer.unref();
    this.timers.set(message.Id, timer);
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.options.concurrency && this.ready.length > 0) {
      const message = this.ready.shift()!;
      const run: Promise<void> = this.attempt(message)
        .catch((e) => this.warn(e))
        .finally(() => {
          this.running.delete(run);
          this.pump();
          this.checkIdle();
        });
      this.running.add(run);
    }
  }

  private async attempt(message: OutboxMessage): Promise<void> {
    // Taken over by another instance while it waited (its lease could not be renewed).
    if (!this.owned.has(message.Id)) return;
    const attempt = message.Attempt + 1;
    const time = new Date();
    const started = performance.now();
    let outcome: Outcome;
    try {
      outcome = await this.send(message);
    } catch (e) {
      outcome = { status: null, success: false, error: (e as Error).message };
    }
    if (outcome.interrupted) return;
    if (outcome.unavailable) {
      // Not the receiver's failure: no log row, no attempt counted, no back-off (a retry
      // schedule of 5 s, 30 s, 2 min would delay it long after the database is back).
      // Held as it is stored (the heartbeat keeps its lease) and tried again soon.
      const current = this.owned.get(message.Id);
      if (current !== undefined) this.schedule(current, Date.now() + UNAVAILABLE_RETRY_MS);
      return;
    }
    const row: DeliveryAttempt = {
      Time: time.toISOString(),
      WebhookId: message.WebhookId,
      MessageId: message.Id,
      Event: message.Event,
      Attempt: attempt,
      Status: outcome.status,
      Success: outcome.success,
      DurationMs: Math.round((performance.now() - started) * 1000) / 1000,
      Error: outcome.error,
    };
    if (outcome.status === 410) {
      // Gone: the receiver asks not to be called again (Standard Webhooks). Retrying cannot
      // help; the webhook is paused, as its owner would, and the log row says why.
      row.Error = `${outcome.error ?? 'HTTP 410'} (Gone: the webhook is paused; set IsPaused to false to deliver again)`;
      await this.webhooks.pause(message.WebhookId).catch((e) => this.warn(e));
    }
    await this.log.record(row).catch((e) => this.warn(e));
    const delay = outcome.status === 410 || outcome.success || outcome.final ? null : retryDelay(this.options.retrySchedule, attempt);
    if (outcome.success) this.outcomes.delivered++;
    else if (delay === null) this.outcomes.givenUp++;
    else this.outcomes.retrying++;
    // On the version last stored (renewals change it); not at all once another instance took it over.
    await this.owned.write(message.Id, async (current) => {
      if (delay === null) {
        this.drop(current);
        await this.outbox.remove(current);
        return;
      }
      const dueAt = Date.now() + delay;
      try {
        this.schedule(await this.outbox.update(current, { ...current, Attempt: attempt, DueAt: dueAt, LockedUntil: dueAt + this.lease }));
      } catch (e) {
        // Deleted or changed elsewhere: no longer ours to retry.
        this.drop(current);
        throw e;
      }
    });
  }

  private async send(message: OutboxMessage): Promise<Outcome> {
    let webhook: Webhook | undefined;
    try {
      webhook = await this.webhooks.find(message.WebhookId);
    } catch (e) {
      if (ServiceError.is(e) && e.code === 'ServiceUnavailable')
        return { status: null, success: false, error: e.message, unavailable: true };
      throw e;
    }
    if (!webhook) return { status: null, success: false, error: 'The webhook no longer exists; the message is dropped', final: true };
    // Paused webhooks are skipped (docs/webhooks.md): retries still pending when it was paused are dropped too.
    if (webhook.IsPaused) return { status: null, success: false, error: 'The webhook is paused; the message is dropped', final: true };
    const origin = this.origins.of(message.Id) ?? new Origin(message.Origin);
    const payload = await buildPayload(this.deps, webhook, message, origin);
    if (payload.kind === 'abort') return { status: null, success: false, error: `Aborted: ${payload.reason}`, final: true };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(webhook.Headers)) headers[name.toLowerCase()] = value;
    if (payload.contentType !== null) headers['content-type'] = payload.contentType;
    const timestamp = Math.floor(Date.now() / 1000);
    headers['webhook-id'] = message.Id;
    headers['webhook-timestamp'] = String(timestamp);
    if (webhook.Secret) headers['webhook-signature'] = sign(webhook.Secret, message.Id, timestamp, payload.body);
    const hasBody = webhook.Method !== 'GET' && webhook.Method !== 'HEAD' && payload.body !== null;
    const body = hasBody ? payload.body : null;
    if (webhook.Destination.startsWith('/')) return this.sendLocal(webhook, message, headers, body, origin);
    // A local delivery counts as the local request it is; a remote one here.
    if (!origin.take(this.deps.local.maxCaused)) {
      const request = { method: webhook.Method, uri: webhook.Destination, headers, body };
      return loopStopped(await this.deps.local.refuse(request, origin, message.Depth + 1));
    }
    return this.sendRemote(webhook, headers, body);
  }

  /** Relative destinations run in-process, one level deeper than the raising request. */
  private async sendLocal(
    webhook: Webhook,
    message: OutboxMessage,
    headers: Record<string, string>,
    body: Buffer | null,
    origin: Origin,
  ): Promise<Outcome> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Timed out after ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
      timer.unref();
    });
    const request = { method: webhook.Method, uri: webhook.Destination, headers, body };
    try {
      const response = await Promise.race([this.deps.local.handle(request, message.Depth + 1, undefined, origin), timeout]);
      if (response.status === 508) return loopStopped(response);
      const text = (await collectBody(response.body)).toString('utf8');
      return outcomeOf(response.status, text);
    } catch (e) {
      // Past the depth limit: answered and recorded as a refusal past the count is.
      if (ServiceError.is(e) && e.code === 'InfiniteLoopDetected')
        return loopStopped(await this.deps.local.refuse(request, origin, message.Depth + 1, e));
      return { status: null, success: false, error: (e as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }

  private async sendRemote(webhook: Webhook, headers: Record<string, string>, body: Buffer | null): Promise<Outcome> {
    const controller = new AbortController();
    this.controllers.add(controller);
    const policy = { allowPrivate: this.deps.outgoing.allowPrivate, timeoutMs: this.options.timeoutMs, signal: controller.signal };
    try {
      return await send(new URL(webhook.Destination), { method: webhook.Method, headers, body }, policy, async (response, signal) => {
        if (!response.ok) return outcomeOf(response.status, await readStart(response, signal));
        await response.body?.cancel().catch(() => undefined);
        return { status: response.status, success: true, error: null };
      });
    } catch (e) {
      if (!(e instanceof SendFailure)) return { status: null, success: false, error: (e as Error).message };
      switch (e.kind) {
        case 'aborted':
          return { status: null, success: false, error: null, interrupted: true };
        case 'refused':
          return { status: null, success: false, error: `Refused: ${e.detail}`, final: true };
        case 'timeout':
          return { status: null, success: false, error: `Timed out after ${e.detail}` };
        default:
          return { status: null, success: false, error: e.detail };
      }
    } finally {
      this.controllers.delete(controller);
    }
  }

  /** Picks up messages whose lease ran out (a stopped instance, a restart); a sweep still running is not doubled. */
  private sweep(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    try {
      const now = Date.now();
      for (const message of await this.outbox.unleased(now, 1000)) {
        if (this.closed || this.owned.has(message.Id)) continue;
        const claimed = await this.outbox.claim(message, Math.max(now, message.DueAt) + this.lease);
        if (claimed) this.take(claimed);
      }
    } catch (e) {
      this.warn(e);
    }
  }

  /**
   * Stops: interrupts attempts in flight, waits for them, for a sweep and for lease
   * renewals still running, and hands every held message back to the outbox. Once it
   * resolves the worker uses its storage no more (the app may end a database pool).
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.ready.length = 0;
    for (const controller of this.controllers) controller.abort(CLOSED);
    await Promise.allSettled([...this.running, this.sweeping]);
    await this.owned.settled();
    const held = this.owned.values();
    for (const message of held) this.drop(message);
    await Promise.allSettled(held.map((m) => this.outbox.update(m, { ...m, LockedUntil: 0 })));
    this.checkIdle();
  }

  private warn(error: unknown): void {
    process.emitWarning(`Webhook delivery: ${error instanceof Error ? error.message : String(error)}`, 'ResourceryWebhookWarning');
  }
}

function outcomeOf(status: number, text: string): Outcome {
  if (status >= 200 && status < 300) return { status, success: true, error: null };
  const snippet = text.length > 300 ? `${text.slice(0, 300)}...` : text;
  return { status, success: false, error: snippet ? `HTTP ${status}: ${snippet}` : `HTTP ${status}` };
}

/** A 508 of the service's own (a loop or fan-out it stopped): retrying only adds to it. */
async function loopStopped(response: PlainResponse): Promise<Outcome> {
  return { ...outcomeOf(response.status, (await collectBody(response.body)).toString('utf8')), final: true };
}

/** The first bytes of an error answer, for the log; the rest is discarded. */
async function readStart(response: Response, signal: AbortSignal): Promise<string> {
  if (!response.body || signal.aborted) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < 1024) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A broken error body still leaves the status to report.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).toString('utf8');
}
