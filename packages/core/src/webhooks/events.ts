import type { Origin } from '../outgoing/origin.js';
import type { Entity } from '../query/conditions.js';
import type { Storage } from '../storage/storage.js';
import { storageWrite } from '../storage/clock.js';

export interface EventDefinition {
  description?: string;
  /** JSON Schema of the payload entities: types the conditions of event selectors. */
  schema?: object;
  /** Set for a binary event: the Content-Type of its payload. */
  contentType?: string;
}

/** A binary event payload: sent as-is with its own Content-Type. */
export interface BinaryPayload {
  contentType?: string;
  body: Uint8Array | string;
}

export type EventPayload = Entity | Entity[] | BinaryPayload | Uint8Array | string;

export interface RaiseOptions {
  /** How deep in local requests the raising request was (stops webhook loops). */
  depth?: number;
  /** The client request the raise descends from (bounds what it causes); none: the raise is an origin itself. */
  origin?: Origin;
}

export interface RaisedEvent {
  name: string;
  time: Date;
  /** Entity payload (one entity is given as an array of one). */
  entities?: Entity[];
  binary?: { contentType: string; body: Uint8Array };
  depth: number;
  origin?: Origin;
}

export type EventListener = (event: RaisedEvent) => void | Promise<void>;

/** What an event owes to storages (webhooks: its outbox messages), made before the change it reports is written. */
export interface EventWrites {
  writes: Array<{ storage: Storage; insert: Entity[] }>;
  /** Called once the writes are committed. */
  done(): void;
}

/** Prepares an event's writes; null when it owes none. */
export type EventPreparer = (event: RaisedEvent) => Promise<EventWrites | null>;

/**
 * An event prepared before the change it reports is written. `writes` may commit in the
 * change's own transaction (the transactional outbox, docs/webhooks.md); `finish` then
 * takes `true`, else it writes them itself. Either way it calls the listeners after.
 */
export interface PreparedEvent {
  readonly writes: ReadonlyArray<{ storage: Storage; insert: Entity[] }>;
  finish(written: boolean): Promise<void>;
}

/**
 * Event resources and their listeners. `raise` resolves once every listener has taken
 * the event (webhooks write their outbox then), so a change is acknowledged only after
 * its deliveries are recorded; a change's own events are prepared before it is written,
 * so that their outbox messages can commit with it. A failing listener never fails the
 * raise: the change it reports has already happened.
 */
export class Events {
  private readonly definitions = new Map<string, EventDefinition & { name: string }>();
  private readonly listeners: EventListener[] = [];
  private readonly preparers: EventPreparer[] = [];
  /** Where listener failures go; replace it to log them your way. */
  onListenerError: (error: unknown, event: RaisedEvent) => void = (error, event) => {
    process.emitWarning(
      `A listener of event '${event.name}' failed: ${error instanceof Error ? error.message : String(error)}`,
      'ResourceryEventWarning',
    );
  };

  define(name: string, definition: EventDefinition = {}): void {
    this.definitions.set(name.toLowerCase(), { ...definition, name });
  }

  get(name: string): (EventDefinition & { name: string }) | undefined {
    return this.definitions.get(name.toLowerCase());
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** A listener whose writes commit with the change that raises the event, where the storage can (webhooks' outbox). */
  prepareWith(preparer: EventPreparer): void {
    this.preparers.push(preparer);
  }

  async raise(name: string, payload: EventPayload, options: RaiseOptions = {}): Promise<void> {
    await (await this.prepare(name, payload, options))?.finish(false);
  }

  /** The event's writes, before the change it reports is written; null when there is no event to raise. */
  async prepare(name: string, payload: EventPayload, options: RaiseOptions = {}): Promise<PreparedEvent | null> {
    const definition = this.get(name);
    if (!definition) throw new Error(`Unknown event '${name}': define it with service.defineEvent first`);
    const event: RaisedEvent = { name: definition.name, time: new Date(), depth: options.depth ?? 0, origin: options.origin };
    if (definition.contentType !== undefined) {
      event.binary = toBinary(payload, definition.contentType, name);
    } else {
      event.entities = toEntities(payload, name);
      if (event.entities.length === 0) return null;
    }
    if (this.listeners.length === 0 && this.preparers.length === 0) return null;
    const parts: EventWrites[] = [];
    for (const preparer of this.preparers) {
      try {
        const part = await preparer(event);
        if (part !== null) parts.push(part);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
    return {
      writes: parts.flatMap((p) => p.writes),
      finish: async (written) => {
        await Promise.all([...parts.map((part) => this.complete(part, written, event)), this.notify(event)]);
      },
    };
  }

  /** Writes a part that did not commit with the change (when asked to), then tells it. */
  private async complete(part: EventWrites, written: boolean, event: RaisedEvent): Promise<void> {
    try {
      if (!written) for (const { storage, insert } of part.writes) await storageWrite(storage, { insert });
      part.done();
    } catch (error) {
      this.onListenerError(error, event);
    }
  }

  private async notify(event: RaisedEvent): Promise<void> {
    await Promise.all(
      this.listeners.map(async (listener) => {
        try {
          await listener(event);
        } catch (error) {
          this.onListenerError(error, event);
        }
      }),
    );
  }
}

function toBinary(payload: EventPayload, contentType: string, name: string): RaisedEvent['binary'] {
  if (typeof payload === 'string') return { contentType, body: Buffer.from(payload) };
  if (payload instanceof Uint8Array) return { contentType, body: payload };
  const p = payload as BinaryPayload;
  if (p === null || typeof p !== 'object' || (typeof p.body !== 'string' && !(p.body instanceof Uint8Array))) {
    throw new TypeError(`Event '${name}' is binary: raise it with bytes, a string or { body, contentType? }`);
  }
  return { contentType: p.contentType ?? contentType, body: typeof p.body === 'string' ? Buffer.from(p.body) : p.body };
}

function toEntities(payload: EventPayload, name: string): Entity[] {
  const entities = Array.isArray(payload) ? payload : [payload];
  for (const e of entities) {
    if (e === null || typeof e !== 'object' || Array.isArray(e) || e instanceof Uint8Array) {
      throw new TypeError(`Event '${name}' carries entities: raise it with an object or an array of objects`);
    }
  }
  return entities as Entity[];
}
