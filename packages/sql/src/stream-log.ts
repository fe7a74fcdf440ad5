import type { Backlog, LoggedEvent, Retention, StreamLog } from '@resourcery/core';
import type { Entity, RaisedEvent } from '@resourcery/core';
import { sessionFor, type Session, type SqlClient } from './client.js';
import { quoteTableName } from './table-name.js';

export interface SqlStreamLogOptions {
  /** The database the instances share: a PGlite instance, a `pg` Pool or Client. */
  client: SqlClient;
  /** The log's table (default `resourcery_events`), made on first use. */
  table?: string;
  /** How often the log is read when no notification came (a dropped LISTEN connection): default 1 s. */
  pollMs?: number;
}

/** What a PostgreSQL LISTEN needs: PGlite's `listen`, or a pg connection's `notification` events. */
interface PgliteLike {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}
interface PgConnection extends SqlClient {
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners?(event: string): unknown;
  release?(error?: boolean | Error): void;
}
interface PgPool extends SqlClient {
  connect(): Promise<PgConnection>;
  totalCount: number;
}

/**
 * An event log shared by the service instances on one database (docs/events.md, "Across
 * instances"): `createService({ streams: { log: sqlStreamLog({ client }) } })` on each.
 * Every raised event is a row; a NOTIFY wakes every instance, which reads the rows after
 * the last it saw and hands them to its streams, so an event raised anywhere reaches
 * subscribers everywhere, in one order. Rows older than the retention are deleted.
 */
export function sqlStreamLog(options: SqlStreamLogOptions): (retention: Retention) => StreamLog {
  return (retention) => new SqlStreamLog(options, retention);
}

const BATCH = 1000;

class SqlStreamLog implements StreamLog {
  private readonly session: Session;
  private readonly table: string;
  private readonly meta: string;
  private readonly channel: string;
  private listener: (event: LoggedEvent) => void = () => {};
  /** The newest row handed to the listener. */
  private seen = 0;
  private readying: Promise<void> | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private unlisten: (() => Promise<void> | void) | undefined;
  private closed = false;
  private appended = 0;

  constructor(
    private readonly options: SqlStreamLogOptions,
    private readonly retention: Retention,
  ) {
    this.session = sessionFor(options.client);
    const name = options.table ?? 'resourcery_events';
    this.table = quoteTableName(name);
    this.meta = quoteTableName(`${name}_trimmed`);
    this.channel = name.toLowerCase().replace(/[^a-z0-9_]/g, '_');
    // Started now: an event another instance raises must reach this one's streams however soon they open.
    void this.ready().catch(() => undefined);
  }

  async append(event: RaisedEvent): Promise<void> {
    await this.ready();
    const body = JSON.stringify(
      event.binary
        ? { binary: { contentType: event.binary.contentType, base64: Buffer.from(event.binary.body).toString('base64') } }
        : { entities: event.entities },
    );
    // One appender at a time, until its commit: ids then come in commit order, and a reader
    // that saw id n never meets a smaller id committed later.
    await this.session.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`resourcery events ${this.table}`]);
      await query(`INSERT INTO ${this.table} (raised_at, name, body) VALUES ($1, $2, $3)`, [
        String(event.time.getTime()),
        event.name,
        body,
      ]);
      await query(`SELECT pg_notify($1, '')`, [this.channel]);
    });
    if (++this.appended % 100 === 0) void this.trim().catch(() => undefined);
    // This instance's own streams need no notification.
    this.read();
  }

  listen(listener: (event: LoggedEvent) => void): void {
    this.listener = listener;
  }

  async after(id: string): Promise<Backlog> {
    await this.ready();
    if (!/^\d{1,15}$/.test(id)) return 'reset';
    const seq = Number(id);
    await this.trim();
    const [{ trimmed, newest }] = await this.session.query(
      `SELECT (SELECT trimmed FROM ${this.meta})::text AS trimmed, (SELECT coalesce(max(id), 0) FROM ${this.table})::text AS newest`,
    );
    if (seq < Number(trimmed) || seq > Number(newest)) return 'reset';
    // Only what this instance has handed its streams: later rows come to them live.
    const rows = await this.session.query(
      `SELECT id::text, raised_at::text AS time, name, body FROM ${this.table} WHERE id > $1 AND id <= $2 ORDER BY id`,
      [String(seq), String(this.seen)],
    );
    return { after: seq, events: rows.map(toLogged) };
  }

  latest(): string | undefined {
    return this.seen === 0 ? undefined : String(this.seen);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.unlisten?.();
  }

  private ready(): Promise<void> {
    this.readying ??= this.start().catch((e) => {
      this.readying = null;
      throw e;
    });
    return this.readying;
  }

  private async start(): Promise<void> {
    await this.session.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`resourcery create ${this.table}`]);
      await query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (id bigserial PRIMARY KEY, raised_at bigint NOT NULL, name text NOT NULL, body text NOT NULL)`,
      );
      await query(`CREATE TABLE IF NOT EXISTS ${this.meta} (trimmed bigint NOT NULL)`);
      await query(`INSERT INTO ${this.meta} (trimmed) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${this.meta})`);
    });
    const [{ newest }] = await this.session.query(`SELECT coalesce(max(id), 0)::text AS newest FROM ${this.table}`);
    // Streams start from now: earlier rows are only for resuming.
    this.seen = Math.max(this.seen, Number(newest));
    await this.subscribe();
    if (this.closed) return;
    this.timer = setInterval(() => this.read(), this.options.pollMs ?? 1000).unref();
  }

  /** LISTEN on the log's channel: PGlite in process, or a connection of its own from a pg Pool. */
  private async subscribe(): Promise<void> {
    const client = this.options.client as unknown;
    if (typeof (client as PgliteLike).listen === 'function') {
      this.unlisten = await (client as PgliteLike).listen(this.channel, () => this.read());
      return;
    }
    const connection =
      typeof (client as PgPool).connect === 'function' && 'totalCount' in (client as object)
        ? await (client as PgPool).connect()
        : (client as PgConnection);
    if (typeof connection.on !== 'function') return; // No notifications: the poll alone.
    const onNotification = (message: { channel: string }) => {
      if (message.channel === this.channel) this.read();
    };
    connection.on('notification', onNotification);
    connection.on('error', () => undefined);
    await connection.query(`LISTEN ${this.channel}`);
    this.unlisten = async () => {
      await connection.query(`UNLISTEN ${this.channel}`).catch(() => undefined);
      connection.removeAllListeners?.('notification');
      connection.release?.();
    };
  }

  /** Reads the rows after the last seen and hands them on; one read at a time, another after it when asked meanwhile. */
  private read(): void {
    if (this.closed) return;
    if (this.reading !== null) {
      this.again = true;
      return;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        let rows;
        do {
          rows = await this.session.query(
            `SELECT id::text, raised_at::text AS time, name, body FROM ${this.table} WHERE id > $1 ORDER BY id LIMIT ${BATCH}`,
            [String(this.seen)],
          );
          for (const row of rows) {
            const event = toLogged(row);
            this.seen = event.seq;
            this.listener(event);
          }
        } while (rows.length === BATCH);
      } while (this.again && !this.closed);
    })()
      .catch(() => undefined)
      .finally(() => {
        this.reading = null;
      });
  }

  /** Deletes rows past the retention, remembering the newest deleted id (a resume from before it resets). */
  private async trim(): Promise<void> {
    const oldest = Date.now() - this.retention.retentionMs;
    await this.session.query(
      `WITH gone AS (DELETE FROM ${this.table} WHERE raised_at < $1 OR id <= (SELECT max(id) FROM ${this.table}) - $2 RETURNING id)
       UPDATE ${this.meta} SET trimmed = greatest(trimmed, (SELECT coalesce(max(id), 0) FROM gone))`,
      [String(oldest), String(this.retention.retentionEvents)],
    );
  }
}

function toLogged(row: Record<string, unknown>): LoggedEvent {
  const body = JSON.parse(String(row.body)) as { entities?: Entity[]; binary?: { contentType: string; base64: string } };
  return {
    id: String(row.id),
    seq: Number(row.id),
    name: String(row.name),
    time: Number(row.time),
    entities: body.entities,
    binary: body.binary && { contentType: body.binary.contentType, body: Buffer.from(body.binary.base64, 'base64') },
  };
}
