import type { Entity } from './query/conditions.js';

export interface EventDefinition {
  description?: string;
  /** JSON Schema of the payload entities (documentation; not enforced on raise). */
  schema?: object;
  /** Set for a binary event: the Content-Type of its payload. */
  contentType?: string;
}

/** A binary event payload: sent as-is with its own Content-Type. */
export interface BinaryPayload {
  contentType?: string;
  body: Uint8Array | string;
}

export interface RaisedEvent {
  name: string;
  time: Date;
  /** Entity payload (one entity is given as an array of one). */
  entities?: Entity[];
  binary?: { contentType: string; body: Uint8Array };
}

export type EventListener = (event: RaisedEvent) => void | Promise<void>;

/**
 * Event resources and their listeners. `raise` resolves once every listener has taken
 * the event (webhooks write their outbox then), so a change is acknowledged only after
 * its deliveries are recorded.
 */
export class Events {
  private readonly definitions = new Map<string, EventDefinition & { name: string }>();
  private readonly listeners: EventListener[] = [];

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

  async raise(name: string, payload: Entity | Entity[] | BinaryPayload): Promise<void> {
    const definition = this.get(name);
    if (!definition) throw new Error(`Unknown event '${name}': define it with service.defineEvent first`);
    const event: RaisedEvent = { name: definition.name, time: new Date() };
    if (definition.contentType !== undefined) {
      const p = payload as BinaryPayload;
      const body = typeof p.body === 'string' ? Buffer.from(p.body) : p.body;
      event.binary = { contentType: p.contentType ?? definition.contentType, body };
    } else {
      event.entities = Array.isArray(payload) ? payload : [payload as Entity];
      if (event.entities.length === 0) return;
    }
    if (this.listeners.length === 0) return;
    await Promise.all(this.listeners.map((l) => l(event)));
  }
}
