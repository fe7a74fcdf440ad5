import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createService, MemoryStorage, ServiceError, type ContentType, type Entity, type Service } from '@resourcery/core';

/** Products of a small shop; names hold characters that must stay encoded in a URI. */
export const PRODUCTS: Entity[] = [
  { Sku: 'B-1', Name: 'Nuts&Bolts', Price: 4 },
  { Sku: 'S-7', Name: 'Saw 1/2"', Price: 25 },
  { Sku: 'H-3', Name: 'Hammer', Price: 18 },
];

/**
 * Test support shared by the adapters built on the node bridge (node, Express, Koa):
 * a real server on 127.0.0.1:0, raw requests, and streamed bodies a test can gate.
 */

/**
 * A content type whose body is an async iterable: one product per line. After the first
 * line it waits for `release()`, so a test can see that line arrive before the rest
 * exists; `finished` settles when the generator is done or abandoned. An endless body
 * repeats the products forever, so it finishes only when the server stops reading it.
 */
export function gatedLines(options: { endless?: boolean } = {}): {
  type: ContentType;
  release(): void;
  finished: Promise<void>;
  produced(): number;
  stopped(ms?: number): Promise<'stopped' | 'still producing'>;
} {
  let release!: () => void;
  let produced = 0;
  let finish!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const type: ContentType = {
    name: 'Product lines',
    mimeType: 'text/x-product-lines',
    bindings: ['text/x-product-lines'],
    async *write(result) {
      try {
        const entities = result.kind === 'entities' ? result.entities : [];
        let i = 0;
        do {
          for (const e of entities) {
            if (i++ === 1) await gate;
            produced++;
            yield `${e.Sku}\n`;
          }
        } while (options.endless);
      } finally {
        finish();
      }
    },
  };
  // Whether the producer stops within `ms` (an endless one runs until the server stops reading).
  const stopped = (ms = 5000) =>
    Promise.race([
      finished.then(() => 'stopped' as const),
      new Promise<'still producing'>((r) => setTimeout(() => r('still producing'), ms).unref()),
    ]);
  return { type, release, finished, produced: () => produced, stopped };
}

/** A service with a `Shop.Product` resource and, optionally, an extra content type. */
export function shopService(extra?: ContentType): Service {
  const service = createService({ protocols: extra ? [{ name: 'Lines', identifier: 'lines', contentTypes: [extra] }] : [] });
  service.addResource({ name: 'Shop.Product' });
  return service;
}

export async function withProducts(service: Service): Promise<Service> {
  const res = await service.handle({
    method: 'POST',
    uri: '/Shop.Product',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(PRODUCTS),
  });
  if (res.status !== 201) throw new Error(`seeding failed: ${res.status}`);
  return service;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json(): any;
}

export interface Listening {
  port: number;
  request(method: string, path: string, init?: { headers?: Record<string, string>; body?: string | Buffer }): Promise<Reply>;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 at a free port; paths are sent exactly as written (no encoding). */
export async function listen(listener: http.RequestListener): Promise<Listening> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    request: (method, path, init = {}) =>
      new Promise((resolve, reject) => {
        const headers = { ...init.headers, ...(init.body !== undefined ? { 'content-length': String(Buffer.byteLength(init.body)) } : {}) };
        const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
          });
        });
        req.on('error', reject);
        req.end(init.body);
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Starts a GET and resolves with the first body chunk, leaving the response open. */
export function firstChunk(
  port: number,
  path: string,
  headers: Record<string, string>,
): Promise<{ chunk: string; rest: Promise<string>; abort(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers }, (res) => {
      res.setEncoding('utf8');
      res.on('error', () => undefined); // expected once the test aborts
      let rest = '';
      const ended = new Promise<string>((done) => res.on('end', () => done(rest)));
      res.once('data', (chunk: string) => {
        res.on('data', (more: string) => {
          rest += more;
        });
        resolve({ chunk, rest: ended, abort: () => req.destroy() });
      });
    });
    req.on('error', (e) => {
      if (!req.destroyed) reject(e);
    });
  });
}

/** A service that answers only callers whose context names a user (the adapters' `context` option). */
export function userService(): Service {
  const service = createService({
    authenticate: (_request, context: { user?: string } | undefined) => {
      if (!context?.user) throw new ServiceError('NotAuthorized', 'No user in the context');
      return context.user;
    },
  });
  service.addResource({ name: 'Shop.Product', storage: new MemoryStorage(PRODUCTS.map((p) => ({ ...p }))) });
  return service;
}

/**
 * A binary resource `Report.Txt` on the service (docs/binary-resources.md) whose stream
 * gives `first\n`, then waits for `release()` before `rest\n` (endless: lines without end).
 */
export function gatedBinary(
  service: Service,
  options: { endless?: boolean } = {},
): {
  release(): void;
  finished: Promise<void>;
  produced(): number;
  stopped(ms?: number): Promise<'stopped' | 'still producing'>;
} {
  let release!: () => void;
  let finish!: () => void;
  let produced = 0;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  service.addBinaryResource({
    name: 'Report.Txt',
    contentType: 'text/plain; charset=utf-8',
    read: () =>
      (async function* () {
        try {
          produced++;
          yield 'first\n';
          await gate;
          do {
            produced++;
            yield 'rest\n';
          } while (options.endless);
        } finally {
          finish();
        }
      })(),
  });
  const stopped = (ms = 5000) =>
    Promise.race([
      finished.then(() => 'stopped' as const),
      new Promise<'still producing'>((r) => setTimeout(() => r('still producing'), ms).unref()),
    ]);
  return { release, finished, produced: () => produced, stopped };
}
