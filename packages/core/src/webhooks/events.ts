import type { Origin } from '../outgoing/origin.js';
import type { Entity } from '../query/conditions.js';

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

/**
 * Event resources and their listeners. `raise` resolves once every listener has taken
 * the event (webhooks write their outbox then), so a change is acknowledged only after
 * its deliveries are recorded. A failing listener never fails the raise: the change it
 * reports has already happened.
 */
export class Events {
  private readonly definitions = new Map<string, EventDefinition & { name: string }>();
  private readonly listeners: EventListener[] = [];
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

  async raise(name: string, payload: EventPayload, options: RaiseOptions = {}): Promise<void> {
    const definition = this.get(name);
    if (!definition) throw new Error(`Unknown event '${name}': define it with service.defineEvent first`);
    const event: RaisedEvent = { name: definition.name, time: new Date(), depth: options.depth ?? 0, origin: options.origin };
    if (definition.contentType !== undefined) {
      event.binary = toBinary(payload, definition.contentType, name);
    } else {
      event.entities = toEntities(payload, name);
      if (event.entities.length === 0) return;
    }
    if (this.listeners.length === 0) return;
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
