import type { Entity, Storage } from '@resourcery/core';
import type { SelectQuery } from '@resourcery/core/storage';
import { createSqlStorage, openPglite, tableNameFor, waitForDatabase, type SqlClient } from '@resourcery/sql';
import { FileStore } from './file-store.js';
import { redact } from './redact.js';

/** A database the CLI serves from or imports into: `postgres://...` or `pglite:DIR`. */
export interface Database {
  client: SqlClient;
  /** How it is named in messages (no password). */
  label: string;
  storage(resourceName: string): Storage;
  close(): Promise<void>;
}

export interface CatalogEntry {
  name: string;
  /** Imported from a top-level object: one entity. */
  singular: boolean;
  /** The key inferred from the file at import (`id`), so `/posts/1` works as it did on the file. */
  key?: string;
}

/**
 * Which resources a database holds: written by `resourcery import`, read by `serve`.
 * Resource names are dotted and any case; table names are not, so the names live here.
 */
const CATALOG = 'resourcery_catalog';

const ALL: SelectQuery = { conditions: [], predicate: null, order: null, offset: 0, limit: -1 };

/** The admin resources a data file keeps (macros, webhooks, pending deliveries). */
const ADMIN = ['Service.Admin.Macro', 'Service.Admin.Webhook', 'Service.Admin.WebhookOutbox'];

/** How `serve` and `import` reach a PostgreSQL server (flags and the config's `database`). */
export interface DatabaseOptions {
  /** Connections of the pool (default 10): see docs/deployment.md on max_connections. */
  poolSize?: number;
  /** How long a statement waits for a free connection before a 503 (default 5000 ms). */
  acquireTimeoutMs?: number;
  /** How long to wait at start for a server that is not up yet (default 30,000 ms). */
  connectTimeoutMs?: number;
  /** Told what the start waits for (the CLI prints it). */
  onWait?: (message: string) => void;
}

const DEFAULT_POOL_SIZE = 10;

export async function openDatabase(source: string, options: DatabaseOptions = {}): Promise<Database> {
  let client: SqlClient;
  let close: () => Promise<void>;
  let label: string;
  if (/^pglite:/i.test(source)) {
    const dir = source.slice('pglite:'.length);
    if (dir === '') throw new Error('pglite: needs a directory, e.g. pglite:./data (it is created when missing)');
    const pglite = await openPglite(dir);
    client = pglite;
    close = () => pglite.close();
    label = source;
  } else {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: source, max: options.poolSize ?? DEFAULT_POOL_SIZE, connectionTimeoutMillis: 10_000 });
    // An idle client's error (server restart) must not crash the process; the next query reports it.
    pool.on('error', () => undefined);
    client = pool;
    close = () => pool.end();
    label = redact(source);
    try {
      // A server still starting (or restarting) is waited for, saying so; a wrong password is not.
      await waitForDatabase(pool, {
        timeoutMs: options.connectTimeoutMs,
        onWait: (reason, ms) => options.onWait?.(`waiting for ${label} (${reason}); trying again in ${(ms / 1000).toFixed(2)} s`),
      });
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw new Error(`cannot connect to ${label}: ${(e as Error).message}`);
    }
  }
  await client.query(`CREATE TABLE IF NOT EXISTS ${CATALOG} (name text PRIMARY KEY, singular boolean NOT NULL DEFAULT false, key text)`);
  // A catalog written before keys were kept gains the column (its resources have no key).
  await client.query(`ALTER TABLE ${CATALOG} ADD COLUMN IF NOT EXISTS key text`);
  const acquireTimeoutMs = options.acquireTimeoutMs;
  return { client, label, close, storage: (name) => createSqlStorage({ client, table: tableNameFor(name), acquireTimeoutMs }) };
}

export async function catalog(db: Database): Promise<CatalogEntry[]> {
  const rows = (await db.client.query(`SELECT name, singular, key FROM ${CATALOG} ORDER BY name`)).rows as Array<Record<string, unknown>>;
  return rows.map((r) => ({ name: String(r.name), singular: r.singular === true, key: typeof r.key === 'string' ? r.key : undefined }));
}

/**
 * `resourcery import data.json DB`: every resource of the file (and its macros and
 * webhooks) into tables of the database. Refuses, changing nothing, when a resource
 * already holds entities there, so an import never doubles data.
 */
export async function importFile(
  file: string,
  db: Database,
  keyOf: (entities: readonly Entity[]) => string | undefined = () => undefined,
): Promise<Array<{ name: string; count: number }>> {
  // Read only: a server may be running on the file (its journal is replayed in memory, not written back).
  const store = await FileStore.load(file, { writable: false });
  const known = new Set((await catalog(db)).map((e) => e.name.toLowerCase()));
  const names = [...store.resources.keys()];
  for (const name of names) {
    if (known.has(name.toLowerCase()) && (await countOf(db.storage(name))) > 0) {
      throw new Error(`${name} already holds entities in ${db.label}: import fills empty resources only (nothing was imported)`);
    }
  }
  const done: Array<{ name: string; count: number }> = [];
  for (const name of names) {
    const entities = store.resources.get(name)!.all() as Entity[];
    if (entities.length > 0) await db.storage(name).write({ insert: entities.slice() });
    const singular = store.singular.has(name);
    await db.client.query(
      `INSERT INTO ${CATALOG} (name, singular, key) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET singular = EXCLUDED.singular, key = EXCLUDED.key`,
      [name, singular, singular ? null : (keyOf(entities) ?? null)],
    );
    done.push({ name, count: entities.length });
  }
  for (const name of ADMIN) {
    const result = await store.adminStorage(name)!.select(ALL);
    const entities: Entity[] = [];
    for await (const e of result.entities) entities.push(e);
    const target = db.storage(name);
    if (entities.length > 0 && (await countOf(target)) === 0) await target.write({ insert: entities });
  }
  return done;
}

async function countOf(storage: Storage): Promise<number> {
  if (storage.count) return storage.count(ALL);
  let n = 0;
  for await (const _ of (await storage.select(ALL)).entities) n++;
  return n;
}

/** Adds a resource to the catalog (a config file may declare resources the catalog lacks). */
export async function addToCatalog(db: Database, name: string): Promise<void> {
  await db.client.query(`INSERT INTO ${CATALOG} (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [name]);
}
