import { randomUUID } from 'node:crypto';
import type { EventWrites, RaisedEvent } from './events.js';
import { Origin } from '../outgoing/origin.js';
import type { Entity, Predicate } from '../query/conditions.js';
import type { JsonSchema } from '../query/schema-types.js';
import { storedRowTest } from '../model/rules.js';
import type { OutgoingPolicy } from '../outgoing/local-requests.js';
import type { AnyResourceDefinition, ResourceDefinition } from '../model/resources.js';
import { SELECT_ALL, targetOf, type Storage } from '../storage/storage.js';
import { AdminCache } from '../storage/admin-cache.js';
import { DeliveryWorker, retryDelay, type ResolvedWebhookOptions } from './delivery.js';
import { DeliveryLog, LOG_RESOURCE, LOG_SCHEMA, type DeliveryAttempt } from './log.js';
import { Outbox, OUTBOX_STORAGE, type OutboxMessage } from './outbox.js';
import type { PayloadDeps } from './payload.js';
import { compileSelector, select, type EventSelector } from './selector.js';
import {
  storedWebhook,
  toStoredWebhook,
  WEBHOOK_RESOURCE,
  WEBHOOK_SCHEMA,
  webhookOutput,
  type Webhook,
  type WebhookCatalog,
  type WebhookOutput,
} from './webhook.js';

/** What webhooks are built from (service.ts wires them). */
export interface WebhooksDeps extends WebhookCatalog, PayloadDeps {
  readonly outgoing: OutgoingPolicy;
  readonly options: ResolvedWebhookOptions;
  /** Storage for an admin resource (webhooks, their log, the outbox). */
  storage(name: string): Storage;
}

interface Compiled {
  webhook: Webhook;
  selector: EventSelector;
  /** The author's rows (webhook.ts `Rows`); null for every row. */
  rows: Predicate | null;
}

interface Cache {
  hooks: Compiled[];
  byId: Map<string, Webhook>;
}

/**
 * Webhooks (docs/webhooks.md): the Service.Admin.Webhook and WebhookLog
 * resources, an Events listener that writes matching deliveries to a durable outbox
 * before the raising request answers, and the worker that delivers them.
 */
export class Webhooks {
  readonly options: ResolvedWebhookOptions;
  readonly outbox: Outbox;
  readonly log: DeliveryLog;
  private readonly storage: Storage;
  private readonly worker: DeliveryWorker;
  /** Kept current with other instances sharing the storage (storage/admin-cache.ts). */
  private readonly cache: AdminCache<Cache>;

  /** The Webhook and WebhookLog resources, for the service to declare. */
  readonly definitions: AnyResourceDefinition[];

  constructor(private readonly deps: WebhooksDeps) {
    this.options = deps.options;
    this.storage = deps.storage(WEBHOOK_RESOURCE);
    this.cache = new AdminCache(this.storage, () => this.load());
    const webhooks: ResourceDefinition<Webhook, WebhookOutput> = {
      name: WEBHOOK_RESOURCE,
      description: 'Webhooks: HTTP requests triggered by events',
      schema: WEBHOOK_SCHEMA,
      storage: this.storage,
      indexes: [{ properties: 'Id', unique: true }],
      events: false,
      toOutput: webhookOutput,
      hooks: {
        beforeWrite: (entity, change) => toStoredWebhook(deps, entity, change.existing, change),
        afterWrite: () => this.invalidate(),
      },
    };
    const logStorage = deps.storage(LOG_RESOURCE);
    this.log = new DeliveryLog(logStorage, this.options.maxLogRecords);
    const log: ResourceDefinition<DeliveryAttempt> = {
      name: LOG_RESOURCE,
      description: 'One row per webhook delivery attempt',
      methods: ['GET', 'DELETE', 'REPORT', 'HEAD'],
      schema: LOG_SCHEMA,
      storage: logStorage,
      events: false,
    };
    this.definitions = [webhooks, log];
    this.outbox = new Outbox(deps.storage(OUTBOX_STORAGE));
    this.worker = new DeliveryWorker(
      deps,
      this.outbox,
      this.log,
      { find: (id) => this.find(id), pause: (id) => this.pause(id) },
      this.options,
    );
    deps.events.prepareWith((event) => this.prepare(event));
    this.worker.start();
  }

  /** Stops the worker, handing held messages back to the outbox. */
  close(): Promise<void> {
    return this.worker.close();
  }

  invalidate(): void {
    this.cache.invalidate();
  }

  /** Resolves when no delivery is due, running or waiting for a retry. */
  idle(): Promise<void> {
    return this.worker.idle();
  }

  /** How this process's delivery attempts ended, counted since the service started. */
  get deliveries(): Readonly<{ delivered: number; retrying: number; givenUp: number }> {
    return this.worker.outcomes;
  }

  private async load(): Promise<Cache> {
    const hooks: Compiled[] = [];
    const byId = new Map<string, Webhook>();
    const { entities } = await this.storage.select(SELECT_ALL);
    for await (const e of entities as AsyncIterable<Entity>) {
      const webhook = storedWebhook(e);
      if (webhook === undefined) continue;
      byId.set(webhook.Id, webhook);
      try {
        const selector = compileSelector(this.deps, webhook.EventSelector);
        const schema = this.deps.events.get(selector.event)?.schema as JsonSchema | undefined;
        const rows = typeof webhook.Rows === 'string' ? storedRowTest(webhook.Rows, schema) : null;
        hooks.push({ webhook, selector, rows });
      } catch {
        // A stored selector that no longer compiles (edited storage) fires nothing.
      }
    }
    return { hooks, byId };
  }

  private async find(id: string): Promise<Webhook | undefined> {
    return (await this.cache.get()).byId.get(id);
  }

  /** Pauses a webhook, as a PATCH of IsPaused would (a receiver that answered 410 Gone). */
  private async pause(id: string): Promise<void> {
    const { entities } = await this.storage.select(SELECT_ALL);
    for await (const e of entities as AsyncIterable<Entity>) {
      if (e.Id !== id || e.IsPaused === true) continue;
      await this.storage.write({ update: [{ target: targetOf(this.storage, e), value: { ...e, IsPaused: true } }] });
      this.invalidate();
      return;
    }
  }

  /**
   * The Events preparer: one outbox message per matching webhook, written with the change
   * that raises the event where its storage can (docs/webhooks.md), in any case before
   * the raise resolves; the worker takes them once written.
   */
  private async prepare(event: RaisedEvent): Promise<EventWrites | null> {
    // Strict: a webhook another instance saved before this event was raised must see it.
    const { hooks } = await this.cache.get(true);
    if (hooks.length === 0) return null;
    const now = Date.now();
    // An event raised by the app itself (service.raise) is an origin of its own.
    const origin = event.origin ?? new Origin();
    const messages: OutboxMessage[] = [];
    let binary: OutboxMessage['Binary'] = null;
    for (const { webhook, selector, rows } of hooks) {
      if (webhook.IsPaused) continue;
      let selected = select(selector, event);
      // Only the rows the webhook's author may read (model/rules.ts): a hidden row is never sent.
      if (rows !== null && Array.isArray(selected)) selected = selected.filter(rows);
      if (selected === null || selected.length === 0) continue;
      if (selected === 'binary')
        binary ??= { ContentType: event.binary!.contentType, Body: Buffer.from(event.binary!.body).toString('base64') };
      const dueAt = now + (retryDelay(this.options.retrySchedule, 0) ?? 0);
      messages.push({
        Id: `msg_${randomUUID().replace(/-/g, '')}`,
        WebhookId: webhook.Id,
        Event: event.name,
        Time: event.time.toISOString(),
        Depth: event.depth,
        Origin: origin.id,
        Caused: origin.caused,
        Entities: selected === 'binary' ? null : selected,
        Binary: selected === 'binary' ? binary : null,
        Attempt: 0,
        DueAt: dueAt,
        LockedUntil: dueAt + this.worker.lease,
      });
    }
    if (messages.length === 0) return null;
    return { writes: [{ storage: this.outbox.storage, insert: messages }], done: () => this.worker.accept(messages, origin) };
  }
}
