import { ServiceError, type Entity, type Storage } from '@resourcery/core';
import {
  compileConditions,
  type SelectQuery,
  type SelectResult,
  type Stamp,
  type StorageIndex,
  type Target,
  type WriteBatch,
} from '@resourcery/core/storage';
import { PreparedNames, sessionFor, type Query, type Session, type SqlClient } from './client.js';
import { DeclaredIndexes, indexName } from './indexes.js';
import { prepareCounters, reserveKeys } from './key-counter.js';
import { insertRows } from './insert.js';
import { keyColumnValue, keyIndexName, prepareKeyColumn, takenKey } from './key-column.js';
import { keyColumnComplete, keyOrderGuard, keyTest, ordersByKey } from './key-lookup.js';
import { distinctKeys, searchSql } from './search-distinct.js';
import { projectedBody, Spellings } from './projection.js';
import { after, inBatches, NO_VALUE, orderKey, STREAM_BATCH, type Row } from './stream.js';
import { refusal } from './refusal.js';
import { RowKeys, type RowKey } from './stamps.js';
import { quoteTableName } from './table-name.js';
import { Params, translateConditions, translateOrders, type ConditionsSql } from './translate.js';

export interface SqlStorageOptions {
  /** A PGlite instance (see openPglite), a `pg` Pool, or a `pg` Client (one connection). */
  client: SqlClient;
  /** `table` or `schema.table`: letters, digits and `_`. */
  table: string;
  /** Create the table (and the indexes the resource declares) when missing (default true). */
  create?: boolean;
  /**
   * The most rows one query may read from the table (default 100,000): a query that
   * would read more is refused with a 400 instead of loading them all into memory.
   * See docs/limits.md.
   */
  maxRows?: number;
  /**
   * Build a trigram index on the entities' JSON text for `search` (default false): a GIN
   * index with `gin_trgm_ops`, made only where the `pg_trgm` extension is installed
   * (`CREATE EXTENSION pg_trgm`); searches run the same without it, scanning.
   */
  searchIndex?: boolean;
  /**
   * With a `pg` Pool: how long a statement waits for a free connection before it fails
   * with 503 ServiceUnavailable (default 5000 ms; 0 waits as long as the pool does).
   * See docs/deployment.md.
   */
  acquireTimeoutMs?: number;
}

const DEFAULT_MAX_ROWS = 100_000;

/**
 * The rows the conditions keep, as `r` (the table itself, where its indexes answer the
 * direct tests, the order and the limit) or, when tests or an order need computed
 * columns, as `s`: a subquery fenced with OFFSET 0 that keeps PostgreSQL from inlining
 * the columns into every test that reads them; the direct tests stay inside it, on the
 * table, and ordering by id inside lets a LIMIT stop the scan early (primary key order).
 */
function scan(table: string, params: Params, c: ConditionsSql, byId = false): { from: string; alias: string } {
  const where = (tests: string[]) => (tests.length === 0 ? '' : ` WHERE ${tests.join(' AND ')}`);
  if (params.columns.length === 0) return { from: `${table} r${where([...c.direct, ...c.tests])}`, alias: 'r' };
  const inner = `SELECT r.id, r.version, r.body, r.doc, ${params.columns.join(', ')} FROM ${table} r${where(c.direct)}${byId ? ' ORDER BY r.id' : ''}`;
  return { from: `(${inner} OFFSET 0) s${where(c.tests)}`, alias: 's' };
}

/** A row count written into a statement's text: only ever a whole number the storage computed. */
function limitText(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return String(n);
}

const tooManyRows = (max: number) =>
  new ServiceError(
    'InvalidMetaConditionValueType',
    `The request would read more than ${max} rows of the SQL table (the storage's maxRows): narrow it with conditions, or a limit with an order the database can apply (an indexed property), or raise maxRows`,
  );

/** A catalog's refusals to a creator that lost a race to one that took no advisory lock. */
const CREATE_RACED = new Set(['23505', '42P07', '42710']);

const conflict = () => new ServiceError('Conflict', 'The entities to change were changed by another request; nothing was written');

/**
 * Entities as rows of one PostgreSQL table: `body` keeps the JSON text as written (key
 * order included), `doc` the same as jsonb for queries, `version` counts updates so that
 * a write whose target changed since it was read is refused (409 Conflict; the service
 * runs the operation again). Storage order is `id` order; updates keep the row.
 */
export class SqlStorage implements Storage {
  readonly table: string;
  /** Text search runs in SQL: exactly, or as a prefilter the service checks (search-distinct.ts). */
  readonly searches = true;
  /** Orders of several keys are one ORDER BY (translate.ts). */
  readonly ordersByKeys = true;
  private readonly quoted: string;
  private readonly session: Session;
  /** The client given: storages on the same one can share a transaction (joins). */
  private readonly client: SqlClient;
  private readonly create: boolean;
  /** The row and version of each entity handed out or written (stamps.ts). */
  private readonly keys = new RowKeys(this);
  /** How the rows spell the properties `select` reads (projection.ts). */
  private readonly spellings = new Spellings();
  private creating: Promise<void> | null = null;
  private readonly indexes = new DeclaredIndexes();
  private indexing: Promise<void> | null = null;
  private readonly maxRows: number;
  private readonly searchIndex: boolean;
  /** The resource key (declareKey), kept unique by the table's `key` column and its unique index. */
  private key: readonly string[] | null = null;
  private keying: Promise<void> | null = null;
  /** Whether the key column holds every stored row's key, so key lookups may go through its index (key-lookup.ts). */
  private keyComplete = false;
  private countersReady: Promise<void> | null = null;
  /** The select statements run prepared, by their text (client.ts). */
  private readonly prepared = new PreparedNames();

  constructor(options: SqlStorageOptions) {
    this.table = options.table;
    this.quoted = quoteTableName(options.table);
    this.session = sessionFor(options.client, options.acquireTimeoutMs);
    this.client = options.client;
    this.create = options.create ?? true;
    this.maxRows = options.maxRows ?? DEFAULT_MAX_ROWS;
    this.searchIndex = options.searchIndex ?? false;
    if (!Number.isInteger(this.maxRows) || this.maxRows < 1) throw new Error(`maxRows must be a positive integer, not ${options.maxRows}`);
  }

  /** The resource's declared indexes (core Storage.useIndexes): built by ready(), used by queries. */
  useIndexes(indexes: readonly StorageIndex[]): void {
    this.indexes.declare(indexes);
    this.indexing = null;
  }

  /** The resource's key (core Storage.declareKey): made unique in the database by ready(). */
  declareKey(key: readonly string[]): void {
    this.key = key;
    this.keying = null;
    this.keyComplete = false;
  }

  /** The table, then its key column when the resource has a key. */
  private tableAndKey(): Promise<void> {
    const key = this.key;
    if (key === null) return this.creating ?? Promise.resolve();
    this.keying ??= (async () => {
      await this.creating;
      await prepareKeyColumn(this.session, this.table, this.quoted, key, this.create);
      this.keyComplete = await keyColumnComplete(this.session.query, this.quoted, key);
    })().catch((e) => {
      this.keying = null;
      throw e;
    });
    return this.keying;
  }

  /** Resolves once the table and the declared indexes exist (created on first use). */
  ready(): Promise<void> {
    if (this.create) {
      this.creating ??= this.createTable().catch((e) => {
        this.creating = null;
        throw e;
      });
    }
    if (this.indexes.empty && !this.searchIndex) return this.tableAndKey();
    this.indexing ??= (async () => {
      await this.tableAndKey();
      if (this.create) for (const ddl of this.indexes.ddl(this.table, this.quoted)) await this.createOnce(ddl);
      if (this.create && this.searchIndex) await this.createSearchIndex();
      await this.indexes.check(this.quoted, (text, params) => this.session.query<{ name: string }>(text, params));
    })().catch((e) => {
      this.indexing = null;
      throw e;
    });
    return this.indexing;
  }

  /** Numbers for generated keys (core Storage.nextKeys), reserved atomically across instances (key-counter.ts). */
  async nextKeys(count: number, atLeast: number, onlyIfNumbers: boolean): Promise<number | null> {
    await this.ready();
    if (this.key === null || this.key.length !== 1) return null;
    this.countersReady ??= (this.create ? prepareCounters(this.session, this.table) : Promise.resolve()).catch((e) => {
      this.countersReady = null;
      throw e;
    });
    await this.countersReady;
    return reserveKeys(this.session, this.table, this.quoted, count, atLeast, onlyIfNumbers);
  }

  /** Readiness (core Storage.check, service.ready()): the table is ready and the database answers now. */
  async check(): Promise<void> {
    await this.ready();
    await this.session.query('SELECT 1');
  }

  /** The trigram index ILIKE searches use (search-distinct.ts), where pg_trgm is installed. */
  private async createSearchIndex(): Promise<void> {
    const [{ installed }] = await this.session.query<{ installed: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') AS installed`,
    );
    if (installed)
      await this.createOnce(
        `CREATE INDEX IF NOT EXISTS ${indexName(this.table, 'search')} ON ${this.quoted} USING gin (body gin_trgm_ops)`,
      );
  }

  private createTable(): Promise<void> {
    return this.createOnce(
      `CREATE TABLE IF NOT EXISTS ${this.quoted} (id bigserial PRIMARY KEY, version bigint NOT NULL DEFAULT 0, body text NOT NULL, doc jsonb GENERATED ALWAYS AS (body::jsonb) STORED, key jsonb)`,
    );
  }

  /**
   * Runs a CREATE ... IF NOT EXISTS. IF NOT EXISTS alone does not make two creators at once
   * safe: the loser fails on the catalog (23505, 42P07, or 42710 "type already exists", a
   * 500 on two instances' first requests). Instances of this storage take turns on an
   * advisory lock instead; a creator that takes no lock (a migration script) may still
   * race, so its win is retried once, when the object exists.
   */
  private async createOnce(ddl: string): Promise<void> {
    const create = () =>
      this.session.transaction(async (query) => {
        await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`resourcery create ${this.table}`]);
        await query(ddl);
      });
    try {
      await create();
    } catch (e) {
      if (!CREATE_RACED.has((e as { code?: string }).code ?? '')) throw e;
      await create();
    }
  }

  private params(): Params {
    return new Params((name) => this.indexes.property(name));
  }

  /** Whether any row passes the test (made with parameters of its own). */
  private async anyRow(test: (params: Params) => string): Promise<boolean> {
    const params = this.params();
    const sql = test(params);
    return (await this.session.query(`SELECT 1 FROM ${this.quoted} r WHERE ${sql} LIMIT 1`, params.values)).length > 0;
  }

  /** The conditions in SQL, with a test on the key column's index when they name the key (key-lookup.ts). */
  private conditionsSql(conditions: SelectQuery['conditions'], params: Params): ConditionsSql {
    const sql = translateConditions(conditions, params);
    const byKey = this.keyComplete && this.key !== null ? keyTest(conditions, this.key, params) : null;
    if (byKey !== null) sql.direct.unshift(byKey);
    return sql;
  }

  async select(query: SelectQuery): Promise<SelectResult> {
    await this.ready();
    let plan = await this.plan(query);
    let rows = await this.session.query<Row>(plan.text, plan.values, this.prepared.nameOf(plan.text));
    // In key order only while every key is a number (key-lookup.ts keyOrderGuard): no row may mean it was not.
    if (plan.keyOrdered && rows.length === 0) {
      plan = await this.plan(query, undefined, false);
      rows = await this.session.query<Row>(plan.text, plan.values, this.prepared.nameOf(plan.text));
    }
    // A page of several cut rows (select pushed down, the page applied here): the service
    // projects every one and asks the version of none, which it does only for a GET of one
    // entity (docs/storage.md#versions-and-conditional-writes), so they are handed out without
    // stamps (~0.5 µs and an object each: 20,000 rows of a select, ~10 ms of CPU).
    const stamped = !(plan.cut !== null && plan.paging && query.limit >= 0 && rows.length > 1);
    const entity = stamped
      ? (row: Row) => {
          const e = JSON.parse(row.body) as Entity;
          this.keys.set(e, row.id, row.version);
          return e;
        }
      : (row: Row) => JSON.parse(row.body) as Entity;
    // Past one batch, a stream reads the rest batch by batch as it is consumed (stream.ts).
    if (plan.batch > 0 && rows.length > plan.batch) {
      if (plan.cut !== null) this.spellings.learn(query.select!, JSON.parse(rows[0].body) as Entity);
      const next = async (after: Row, limit: number): Promise<Row[]> => {
        const rows = await this.batch(query, after, limit);
        if (rows.length === limit || !query.order?.descending || after.k === null || after.k === undefined) return rows;
        return rows.concat(await this.batch(query, NO_VALUE, limit - rows.length));
      };
      return { entities: inBatches(rows, query.limit, plan.batch, next, entity), conditionsApplied: true, pagingApplied: true };
    }
    if (plan.capped && rows.length > this.maxRows) throw tooManyRows(this.maxRows);
    const entities = rows.map(entity);
    if (plan.cut !== null) this.spellings.learn(query.select!, entities[0]);
    return { entities, conditionsApplied: plan.exact, pagingApplied: plan.paging };
  }

  /** A later batch of a stream: the rows after `after`, at most `limit`. */
  private async batch(query: SelectQuery, after: Row, limit: number): Promise<Row[]> {
    const { text, values, exact } = await this.plan(query, { after, limit });
    // A search that SQL answered exactly when the stream began no longer is (search-distinct.ts): stop rather than send a superset.
    if (!exact) throw new ServiceError('Conflict', 'The rows changed while they were streamed; the answer was cut short');
    return this.session.query<Row>(text, values);
  }

  /**
   * The SQL of a select. `next`: a later batch of a stream, the rows after the id `after`
   * (keyset on the primary key, the stream's order), at most `limit`. `batch` > 0: the
   * query may be streamed, and reads one batch (+1) first.
   */
  private async plan(query: SelectQuery, next?: { after: Row; limit: number }, byKey = true) {
    const params = this.params();
    const conditions = this.conditionsSql(query.conditions, params);
    if (query.search !== undefined) {
      const search = searchSql(query.search, params);
      conditions.direct.push(search.sql);
      if (!search.exact) conditions.exact = false;
      else if (search.approximate !== undefined && conditions.exact && (await this.anyRow(search.approximate))) conditions.exact = false;
    }
    // A stream's order: id, or a typed indexed property read on the table itself, then id (stream.ts).
    const orders = query.order === null ? [] : [query.order, ...(query.thenBy ?? [])];
    const keyset = conditions.exact && params.columns.length === 0 && orders.length <= 1 ? orderKey(query.order, params) : null;
    if (next !== undefined) conditions.direct.push(after(keyset, next.after, params));
    // A page in key order (no declared typed index on it): the key column's index gives it, guarded.
    const keyOrdered =
      byKey &&
      next === undefined &&
      conditions.exact &&
      params.columns.length === 0 &&
      this.keyComplete &&
      ordersByKey(query, this.key) &&
      params.indexedProperty(query.order!.locator)?.type === undefined &&
      query.distinct === undefined &&
      query.offset >= 0 &&
      query.limit >= 0 &&
      query.limit <= this.maxRows;
    if (keyOrdered) conditions.direct.push(keyOrderGuard(this.quoted));
    const keyOrder = `r.key${query.order?.descending ? ' DESC' : ''}`;
    const order = keyOrdered ? keyOrder : conditions.exact && orders.length > 0 ? translateOrders(orders, params) : null;
    // A page is cut from the exact matches in the exact order, or not at all.
    const paging = conditions.exact && (query.order === null || order !== null) && query.offset >= 0;
    // distinct: the first row of each group, when the groups can be formed on the table itself.
    const groups =
      conditions.exact && query.distinct !== undefined && params.columns.length === 0 ? distinctKeys(query.distinct, params) : null;
    const { from, alias } = scan(this.quoted, params, conditions, order === null);
    const rowsOf = groups === null ? from : `${this.quoted} r WHERE r.id IN (SELECT min(r.id) FROM ${from} GROUP BY ${groups.join(', ')})`;
    // Only the members the service reads, when it says which (and reads nothing else of them).
    const cut = conditions.exact && query.select !== undefined ? projectedBody(query.select, alias, params, this.spellings) : null;
    const body = cut ?? `${alias}.body`;
    // Never more than maxRows (+1, to tell a full result from a cut one) into memory.
    const capped = !(paging && query.limit >= 0 && query.limit <= this.maxRows);
    // In id order, or in a typed indexed property's order when no test needs computed columns.
    const streams = groups === null && (order === null || Boolean(keyset));
    const batch = capped && query.stream === true && paging && streams ? Math.min(this.maxRows, STREAM_BATCH) : 0;
    const k = (batch > 0 || next !== undefined) && keyset ? `, ${keyset.text} AS k` : '';
    let text = `SELECT ${alias}.id::text AS id, ${alias}.version::text AS version, ${body} AS body${k} FROM ${rowsOf} ORDER BY ${keyOrdered ? keyOrder : `${order === null ? '' : `${order}, `}${alias}.id`}`;
    const limit = next !== undefined ? next.limit : batch > 0 ? batch + 1 : capped ? this.maxRows + 1 : query.limit;
    // The limit is written into the text (a whole number the storage computed): with it as a
    // parameter PostgreSQL cannot cost a plan for any values, and re-planned a prepared
    // page (order + limit) on every request (docs/storage.md#prepared-statements).
    text += ` LIMIT ${limitText(limit)}`;
    if (next === undefined && paging && query.offset > 0) text += ` OFFSET (${params.add(String(query.offset))})::bigint`;
    return { text, values: params.values, exact: conditions.exact, paging, capped, batch, cut, keyOrdered };
  }

  async count(query: Pick<SelectQuery, 'conditions' | 'predicate'>): Promise<number> {
    await this.ready();
    const params = this.params();
    const conditions = this.conditionsSql(query.conditions, params);
    if (conditions.exact) {
      const rows = await this.session.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM ${scan(this.quoted, params, conditions).from}`,
        params.values,
      );
      return Number(rows[0].n);
    }
    const predicate = query.predicate ?? compileConditions(query.conditions);
    const { entities } = await this.select({ ...query, order: null, offset: 0, limit: -1 });
    let n = 0;
    for (const e of entities as Entity[]) if (predicate === null || predicate(e)) n++;
    return n;
  }

  /**
   * Changes with every write: inserts raise max(id) (never reused), deletes lower the
   * count, updates raise the sum of versions. Admin caches of every instance compare it
   * (core storage/admin-cache.ts); it reads the whole table, which is fine for admin tables.
   */
  async changeToken(): Promise<string> {
    await this.ready();
    const rows = await this.session.query<{ t: string }>(
      `SELECT count(*)::text || ':' || coalesce(sum(version), 0)::text || ':' || coalesce(max(id), 0)::text AS t FROM ${this.quoted}`,
    );
    return rows[0].t;
  }

  /** The row id and its update count, as read by `select`. */
  stamp(entity: Entity): Stamp | undefined {
    const key = this.keys.get(entity);
    return key && { row: key.id, version: key.version };
  }

  /** Whether inserts into `other` can commit in this storage's transactions (core Storage.joins): a SQL storage on the same client. */
  joins(other: Storage): boolean {
    return other instanceof SqlStorage && other.client === this.client;
  }

  /** Inserts rows in `query`'s transaction (insert.ts); their ids in insert order. */
  private insertRows(query: Query, inserts: Entity[]): Promise<string[]> {
    return insertRows(query, this.quoted, this.key, inserts);
  }

  /** Hands out inserted entities as rows of this table (their stamps). */
  private inserted(inserts: Entity[], ids: string[]): void {
    inserts.forEach((e, i) => this.keys.set(e, ids[i], '0'));
  }

  async write(batch: WriteBatch): Promise<void> {
    await this.ready();
    // Inserts into other tables on this client (the webhook outbox) commit in this transaction.
    const joined = (batch.with ?? []).filter((w) => w.insert.length > 0) as Array<{ storage: SqlStorage; insert: Entity[] }>;
    for (const { storage } of joined) {
      if (!this.joins(storage)) throw new Error('WriteBatch.with names a storage that cannot share this transaction');
      await storage.ready();
    }
    const keyOf = (target: Target): RowKey => {
      const key = target.stamp ? { id: target.stamp.row, version: target.stamp.version } : this.keys.get(target.entity);
      // Not handed out by this storage, or by another instance: its row cannot be vouched for.
      if (key === undefined || !/^\d+$/.test(key.id) || !/^\d+$/.test(key.version)) throw conflict();
      return key;
    };
    // One row changed twice in a batch: the last value wins, as in MemoryStorage.
    const updates = new Map<string, { key: RowKey; value: Entity }>();
    for (const { target, value } of batch.update ?? []) {
      const key = keyOf(target);
      updates.set(key.id, { key, value });
    }
    const deletes = new Map<string, RowKey>();
    for (const t of batch.delete ?? []) {
      const key = keyOf(t);
      deletes.set(key.id, key);
    }
    const inserts = batch.insert ?? [];
    this.indexes.checkSpelling([...inserts, ...(batch.update ?? []).map((u) => u.value)]);
    if (updates.size === 0 && deletes.size === 0 && inserts.length === 0 && joined.length === 0) return;

    const key = this.key;
    const run = async (query: Query) => {
      let versions: Array<{ id: string; version: string }> = [];
      if (updates.size > 0) {
        const rows = [...updates.values()].map((u) => [u.key.id, u.key.version, u.value, key && keyColumnValue(u.value, key)]);
        // With a key, the key column follows the body; the unique index refuses a taken one (23505: Conflict).
        versions = await query<{ id: string; version: string }>(
          `UPDATE ${this.quoted} AS t SET body = u.body, version = t.version + 1${key ? ', key = u.key' : ''} ` +
            `FROM (SELECT (e ->> 0)::bigint AS id, (e ->> 1)::bigint AS version, (e -> 2)::text AS body, nullif((e -> 3)::jsonb, 'null'::jsonb) AS key FROM json_array_elements($1::text::json) e) u ` +
            'WHERE t.id = u.id AND t.version = u.version RETURNING t.id::text AS id, t.version::text AS version',
          [JSON.stringify(rows)],
        );
        if (versions.length !== updates.size) throw conflict();
      }
      if (deletes.size > 0) {
        const rows = [...deletes.values()].map((k) => [k.id, k.version]);
        const deleted = await query(
          `DELETE FROM ${this.quoted} AS t USING (SELECT (e ->> 0)::bigint AS id, (e ->> 1)::bigint AS version FROM json_array_elements($1::text::json) e) u ` +
            'WHERE t.id = u.id AND t.version = u.version RETURNING t.id',
          [JSON.stringify(rows)],
        );
        if (deleted.length !== deletes.size) throw conflict();
      }
      const ids = inserts.length > 0 ? await this.insertRows(query, inserts) : [];
      const others: string[][] = [];
      for (const { storage, insert } of joined) others.push(await storage.insertRows(query, insert));
      return { versions, ids, others };
    };

    let result: Awaited<ReturnType<typeof run>>;
    try {
      // A single INSERT is atomic by itself (unless a taken key must undo other rows: one row with a taken key inserts nothing);
      // anything that may need a rollback runs in a transaction.
      result =
        updates.size === 0 && deletes.size === 0 && (key === null || inserts.length === 1) && joined.length === 0
          ? await run((text, params) => this.session.query(text, params))
          : await this.session.transaction(run);
    } catch (e) {
      throw (e as { constraint?: string }).constraint === keyIndexName(this.table) ? takenKey() : refusal(e);
    }
    const updated = new Map(result.versions.map((v) => [v.id, v.version]));
    for (const [id, u] of updates) this.keys.set(u.value, id, updated.get(id)!);
    this.inserted(inserts, result.ids);
    joined.forEach(({ storage, insert }, i) => storage.inserted(insert, result.others[i]));
  }
}

/** A Storage over one PostgreSQL table (PGlite or a server), with conditions, order and paging pushed down. */
export function createSqlStorage(options: SqlStorageOptions): SqlStorage {
  return new SqlStorage(options);
}
