import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createService, type Service, type ServiceOptions } from '@resourcery/core';

/** One request a receiver got. */
export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests. `status` sets the answer;
 * `hang` makes it never answer. `waitFor(n)` resolves once n requests arrived.
 */
export class Receiver {
  readonly calls: Received[] = [];
  status = 200;
  hang = false;
  /** The answer to give instead of `status` and 'ok'. */
  reply: { status: number; contentType: string; body: string; headers?: Record<string, string> } | null = null;
  private server: http.Server;
  private waiters: Array<{ n: number; resolve: () => void }> = [];

  private constructor(
    server: http.Server,
    readonly port: number,
  ) {
    this.server = server;
  }

  static async start(port = 0): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = http.createServer((req, res) => receiver!.onRequest(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    receiver = new Receiver(server, (server.address() as AddressInfo).port);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.calls.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks) });
      if (this.hang) {
        // never answers
      } else if (this.reply)
        res.writeHead(this.reply.status, { ...this.reply.headers, 'content-type': this.reply.contentType }).end(this.reply.body);
      else res.writeHead(this.status, { 'content-type': 'text/plain' }).end(this.status < 300 ? 'ok' : 'not now');
      for (const w of this.waiters.filter((w) => this.calls.length >= w.n)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  }

  /** Resolves with the calls once at least n have arrived. */
  async waitFor(n: number): Promise<Received[]> {
    if (this.calls.length < n) await new Promise<void>((resolve) => this.waiters.push({ n, resolve }));
    return this.calls;
  }

  json(i: number): unknown {
    return JSON.parse(this.calls[i].body.toString('utf8'));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A service that may reach the local receiver, with a Person resource. */
export function serviceWithPeople(options: ServiceOptions = {}): Service {
  const service = createService({ allowPrivateDestinations: true, ...options });
  service.addResource({
    name: 'Person',
    schema: {
      type: 'object',
      properties: {
        Id: { type: 'integer' },
        Name: { type: 'string' },
        Age: { type: 'integer' },
        Email: { type: ['string', 'null'] },
        Address: { type: 'object', properties: { City: { type: 'string' } } },
      },
    },
  });
  return service;
}

export interface JsonAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** One request through the core; the body parsed as JSON when there is one. */
export async function call(
  service: Service,
  method: string,
  uri: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer> {
  const response = await service.handle({
    method,
    uri,
    headers: { accept: 'application/json;raw=true', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const chunks: Buffer[] = [];
  const raw = response.body;
  if (typeof raw === 'string') chunks.push(Buffer.from(raw));
  else if (raw instanceof Uint8Array) chunks.push(Buffer.from(raw));
  else if (raw !== null) for await (const c of raw) chunks.push(Buffer.from(c));
  const text = Buffer.concat(chunks).toString('utf8');
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

/** Polls a condition (for state with no event to wait on, such as log rows). */
export async function until<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
