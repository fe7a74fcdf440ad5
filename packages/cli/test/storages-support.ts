import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createService, MemoryStorage, type Entity, type PlainResponse, type Service } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { createSqlStorage, openPglite, type SqlClient } from '@resourcery/sql';
import { createFileService } from '@resourcery/cli';

/**
 * One set of resources served on each storage a rule touches: the library's MemoryStorage,
 * the CLI's data file (its keys inferred as `serve` infers them), and the SQL storage on
 * PGlite; each reached through `service.handle` and over HTTP (a real server on 127.0.0.1:0).
 */

/** Resources by name; every array whose entities have `id` (or is empty) is keyed on `id`, as the CLI infers. */
export type Data = Record<string, Entity[]>;

export interface Served {
  call(method: string, uri: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

const RAW = { accept: 'application/json;raw=true' };
const keyOf = (entities: Entity[]) => (entities.every((e) => e.id !== undefined) ? 'id' : undefined);

async function bodyText(body: PlainResponse['body']): Promise<string> {
  if (body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  let text = '';
  for await (const chunk of body) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return text;
}

function answer(status: number, headers: Record<string, string>, text: string): Answer {
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

function viaHandle(service: Service): Served['call'] {
  return async (method, uri, body, headers = RAW) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const res = await service.handle({
      method,
      uri,
      headers: text === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: text,
    });
    return answer(res.status, res.headers, await bodyText(res.body));
  };
}

async function viaHttp(service: Service): Promise<{ call: Served['call']; close(): Promise<void> }> {
  const server = createServer(service);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    call: async (method, uri, body, headers = RAW) => {
      const res = await fetch(base + uri, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return answer(res.status, Object.fromEntries(res.headers), await res.text());
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type StorageName = 'memory' | 'file' | 'sql';
export type Transport = 'handle' | 'http';

/** Every storage on every transport, for describe.each / test.each. */
export const EVERY: Array<[StorageName, Transport]> = (['memory', 'file', 'sql'] as const).flatMap((s) =>
  (['handle', 'http'] as const).map((t): [StorageName, Transport] => [s, t]),
);

/** Serves data on a storage; one PGlite database per test file, servers and files let go after each test. */
export function storages(): { serve(kind: StorageName, transport: Transport, data: Data): Promise<Served> } {
  let db: SqlClient;
  let tables = 0;
  const open: Array<() => Promise<void>> = [];
  // Opened by the first test that serves from SQL, which then takes a while.
  jest.setTimeout(120000);
  let opening: Promise<SqlClient & { close(): Promise<void> }> | undefined;
  afterAll(async () => {
    if (opening) await (await opening).close();
  });
  afterEach(async () => {
    for (const close of open.splice(0).reverse()) await close();
  });

  async function service(kind: StorageName, data: Data): Promise<Service> {
    if (kind === 'file') {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-storages-'));
      const file = path.join(dir, 'db.json');
      await writeFile(file, JSON.stringify(data));
      const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false });
      open.push(async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      });
      return service;
    }
    const service = createService();
    for (const [name, entities] of Object.entries(data)) {
      const key = keyOf(entities);
      if (kind === 'memory') service.addResource({ name, key, storage: new MemoryStorage(structuredClone(entities)) });
      else {
        db = await (opening ??= openPglite());
        const storage = createSqlStorage({ client: db, table: `storages_${++tables}` });
        service.addResource({ name, key, storage });
        if (entities.length > 0) await storage.write({ insert: structuredClone(entities) });
      }
    }
    return service;
  }

  return {
    async serve(kind, transport, data) {
      const s = await service(kind, data);
      if (transport === 'handle') return { call: viaHandle(s), close: async () => undefined };
      const http = await viaHttp(s);
      open.push(http.close);
      return http;
    },
  };
}
