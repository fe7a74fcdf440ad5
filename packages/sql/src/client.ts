import { createHash } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { asUnavailable, unavailable, unavailableError } from './unavailable.js';

/** What the storage needs from a database client: a PGlite instance, a `pg` Pool or Client. */
export interface SqlClient {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows of any table, as pg returns them
  query(text: string, params?: any[]): Promise<{ rows: any[] }>;
}

/** A client with its own transactions (PGlite): other queries wait while one runs. */
interface TransactionalClient extends SqlClient {
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>;
}

/** Emits 'error' when its connection breaks (pg's Client and Pool): unheard, that kills the process. */
interface Emitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
  off?(event: 'error', listener: (error: Error) => void): unknown;
}

/** pg's query with a statement name: prepared once per connection. */
interface Named {
  query(config: { name: string; text: string; values: string[] }): Promise<{ rows: unknown[] }>;
}

/** pg's Query (`pg.Client.Query`), which a connection's query() runs as it is when given one. */
interface PgQuery {
  name?: string;
  callback?: (error: Error | null, result: { rows: unknown[] }) => void;
}
type PgQueryClass = new (text: string, values: string[]) => PgQuery;
type Submits = { query(query: PgQuery): unknown };

/** A connection checked out of a pool. */
type Checkout = SqlClient & { release(error?: Error | boolean): void } & Partial<Emitter>;

/** A pool (`pg.Pool`): a transaction needs one connection of its own. */
interface PoolClient extends SqlClient {
  connect(): Promise<Checkout>;
  totalCount: number;
  /** pg-pool's idle connections and waiting checkouts (acquire). */
  idleCount?: number;
  waitingCount?: number;
  options?: { verify?: unknown };
  on?(event: string, listener: (...args: never[]) => void): unknown;
}

/**
 * Runs a statement; its rows have the columns the statement selects, which the caller names
 * (`R`): the client's rows are untyped.
 */
export type Query = <R = Record<string, unknown>>(text: string, params?: string[]) => Promise<R[]>;

/** Runs single statements and transactions on a client, whatever its kind. */
export interface Session {
  /** `name`: a prepared statement's name (PreparedNames), used where the client keeps them (a `pg` pool). */
  query: <R = Record<string, unknown>>(text: string, params?: string[], name?: string) => Promise<R[]>;
  transaction<T>(fn: (query: Query) => Promise<T>): Promise<T>;
}

/** How many statement texts one storage prepares at most (each connection keeps them until it closes). */
const MAX_PREPARED = 64;

/**
 * Names for the statements a storage runs often, so that a `pg` connection parses (and
 * PostgreSQL plans, once a plan for any values is no costlier) each text once, not on
 * every request (docs/storage.md#prepared-statements). Statement texts carry no values
 * (those are parameters), so a table has a handful of them; past MAX_PREPARED texts the
 * rest run unnamed, so a client's many query shapes cannot grow every connection's memory.
 */
export class PreparedNames {
  private readonly names = new Map<string, string>();

  nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_PREPARED) this.names.set(text, (name = statementName(text)));
    return name;
  }
}

/**
 * A statement's name, from its text: storages share a pool's connections, also storages of
 * two copies of this package in one process (a counter per copy gave both `resourcery_1`
 * for different texts, and pg refused the second). One text, one name, in every copy.
 */
function statementName(text: string): string {
  return `resourcery_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/** How long a statement may wait for a pooled connection by default (SqlStorageOptions.acquireTimeoutMs). */
const DEFAULT_ACQUIRE_TIMEOUT_MS = 5000;

/**
 * The session for a client. Its statements and transactions fail with 503
 * ServiceUnavailable when the database cannot serve (unavailable.ts); on a pool, a
 * statement that finds no free connection within `acquireTimeoutMs` (0: wait as long as
 * the pool does) fails so too, instead of queueing forever.
 */
export function sessionFor(client: SqlClient, acquireTimeoutMs = DEFAULT_ACQUIRE_TIMEOUT_MS): Session {
  if (
    typeof (client as TransactionalClient).transaction !== 'function' &&
    typeof (client as PoolClient).connect === 'function' &&
    'totalCount' in client
  ) {
    // A pool's statements make their own 503s (one promise fewer a statement).
    const session = pooled(client as PoolClient, acquireTimeoutMs);
    return { query: session.query, transaction: (fn) => session.transaction(fn).catch(asUnavailable) };
  }
  const session =
    typeof (client as TransactionalClient).transaction === 'function'
      ? transactional(client as TransactionalClient)
      : singleConnection(client);
  return {
    query: <R>(text: string, params?: string[], name?: string) => session.query<R>(text, params, name).catch(asUnavailable),
    transaction: (fn) => session.transaction(fn).catch(asUnavailable),
  };
}

const rowsOf =
  (c: SqlClient): Query =>
  async <R>(text: string, params: string[] = []) =>
    (await c.query(text, params)).rows as R[];

function transactional(client: TransactionalClient): Session {
  return { query: rowsOf(client), transaction: (fn) => client.transaction((tx) => fn(rowsOf(tx))) };
}

/** Pools this library listens to already (listened to once, whatever the number of storages on them). */
const heard = new WeakSet<object>();

/**
 * pg's pool emits 'error' for an idle connection the server closed (a restart, a failover,
 * an admin shutdown), and a connection emits it whatever it is doing: with nobody
 * listening, Node ends the process. The pool drops such a connection by itself and the
 * next query opens another, so hearing the error is all it takes; the query that was
 * running fails on its own (docs/deployment.md).
 */
function listenForErrors(pool: PoolClient): void {
  if (typeof pool.on !== 'function' || heard.has(pool)) return;
  heard.add(pool);
  const ignore = () => undefined;
  pool.on('error', ignore);
  const onConnect: (client: Partial<Emitter>) => void = (client) => client.on?.('error', ignore);
  pool.on('connect', onConnect);
}

/**
 * Whether pg-pool hands the next checkout an idle connection at once: more idle connections
 * than checkouts waiting (each waiting one takes an idle one first, in turn), and no
 * `verify` step of the app's between. Then no timer is needed for the wait.
 */
function idleNow(pool: PoolClient): boolean {
  const { idleCount, waitingCount } = pool;
  return typeof idleCount === 'number' && typeof waitingCount === 'number' && idleCount > waitingCount && !pool.options?.verify;
}

/** A connection of the pool, or a 503 when none is free within `ms`; one that comes later goes back at once. */
async function acquire(pool: PoolClient, ms: number): Promise<Checkout> {
  // An idle connection comes at once: no timer (a setTimeout and its clearing a statement).
  if (!(ms > 0) || idleNow(pool)) return pool.connect();
  const connecting = pool.connect();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailableError(`no connection of the pool was free within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([connecting, late]);
  } catch (e) {
    connecting.then(
      (c) => c.release(),
      () => undefined,
    );
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a named statement on a pg connection as a pg Query made from the text and values,
 * its name set before it is sent: what pg's query({ name, text, values }) does, less the
 * copy of that object's property descriptors pg makes of a config (several µs a statement).
 */
function runNamed(connection: Checkout, Query: PgQueryClass, name: string, text: string, values: string[]): Promise<{ rows: unknown[] }> {
  return new Promise((resolve, reject) => {
    const query = new Query(text, values);
    query.name = name;
    query.callback = (error, result) => (error ? reject(error) : resolve(result));
    (connection as unknown as Submits).query(query);
  });
}

function pooled(pool: PoolClient, acquireTimeoutMs: number): Session {
  listenForErrors(pool);
  // Statement names go as pg's Query (pg.Client.Query), or where the pool does not show that
  // class (a wrapper of a pg pool), as pg's config form ({ name, text, values }); a pool of
  // anything else (another driver with pg's pool shape) gets text and values.
  const Client = (pool as { Client?: unknown }).Client;
  const named = typeof Client === 'function';
  const pgQuery = named ? (Client as { Query?: unknown }).Query : undefined;
  const Query = typeof pgQuery === 'function' ? (pgQuery as PgQueryClass) : null;
  return {
    /** A statement; a database outage fails as its 503 (unavailable.ts). */
    async query<R>(text: string, params: string[] = [], name?: string) {
      let connection: Checkout;
      try {
        connection = await acquire(pool, acquireTimeoutMs);
      } catch (e) {
        return asUnavailable(e);
      }
      let broken = false;
      const lost = () => {
        broken = true;
      };
      // Checked out, a connection has no pool listener (one made before this storage has none of ours either).
      connection.on?.('error', lost);
      try {
        const result =
          name === undefined || !named
            ? await connection.query(text, params)
            : Query !== null
              ? await runNamed(connection, Query, name, text, params)
              : await (connection as unknown as Named).query({ name, text, values: params });
        return result.rows as R[];
      } catch (e) {
        // A connection that failed (not a statement the database refused) must leave the pool.
        const outage = unavailable(e);
        broken ||= outage !== null;
        throw outage ?? e;
      } finally {
        connection.off?.('error', lost);
        connection.release(broken);
      }
    },
    async transaction(fn) {
      const connection = await acquire(pool, acquireTimeoutMs);
      const query = rowsOf(connection);
      let broken = false;
      // Checked out, the connection has no pool listener: a server gone between two statements would be unheard.
      const lost = () => {
        broken = true;
      };
      connection.on?.('error', lost);
      try {
        await query('BEGIN');
        const result = await fn(query);
        await query('COMMIT');
        return result;
      } catch (e) {
        // A connection whose ROLLBACK failed is in an unknown state: the pool must drop it.
        await query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw e;
      } finally {
        connection.off?.('error', lost);
        connection.release(broken);
      }
    },
  };
}

/**
 * One connection (a `pg.Client`) serves every statement in order, so a transaction must
 * not let another statement in between its BEGIN and COMMIT: every storage on this
 * client takes turns through one queue.
 */
const queues = new WeakMap<SqlClient, { tail: Promise<unknown> }>();

function singleConnection(client: SqlClient): Session {
  // A pg.Client whose server went away emits 'error': heard, its queries fail instead of the process ending.
  const emitter = client as Partial<Emitter> & object;
  if (typeof emitter.on === 'function' && !heard.has(emitter)) {
    heard.add(emitter);
    emitter.on('error', () => undefined);
  }
  let queue = queues.get(client);
  if (queue === undefined) queues.set(client, (queue = { tail: Promise.resolve() }));
  const q = queue;
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = q.tail.then(fn);
    q.tail = run.catch(() => undefined);
    return run;
  };
  const query = rowsOf(client);
  return {
    query: (text, params) => exclusive(() => query(text, params)),
    transaction: (fn) =>
      exclusive(async () => {
        await query('BEGIN');
        try {
          const result = await fn(query);
          await query('COMMIT');
          return result;
        } catch (e) {
          await query('ROLLBACK').catch(() => undefined);
          throw e;
        }
      }),
  };
}

/** The embedded default: PGlite in memory, or kept in `dataDir` when given. */
export async function openPglite(dataDir?: string): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  return PGlite.create(dataDir);
}
