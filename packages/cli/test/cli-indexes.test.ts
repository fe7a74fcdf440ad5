import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseServeArgs, serve, type CliConfig } from '@resourcery/cli';
import { openPglite, tableNameFor } from '@resourcery/sql';
import { startPostgres, type PostgresServer } from '../../sql/test/postgres';

/**
 * The config's `indexes` per resource (issue 25 item 5): `serve postgres://...` and
 * `serve pglite:DIR` build them, and the queries users filter and sort with go through
 * them, not a sequential scan (EXPLAIN of the statements the server sent).
 */

// A guard against a hang on a loaded machine, not a time budget.
jest.setTimeout(5 * 60_000);

const CONFIG: CliConfig = {
  resources: {
    posts: {
      key: 'id',
      schema: { type: 'object', properties: { id: { type: 'integer' }, author: { type: 'string' }, views: { type: 'integer' } } },
      indexes: ['views', ['author', 'views']],
    },
  },
};

const ROWS = 20_000;
const table = tableNameFor('posts');

type Sent = { on: unknown; text: string; params: unknown[] | undefined };

/** Records every statement `query` methods of `proto` run (with the object they ran on). */
function recordQueries(proto: object): Sent[] {
  let owner: object | null = proto;
  while (owner !== null && !Object.prototype.hasOwnProperty.call(owner, 'query')) owner = Object.getPrototypeOf(owner) as object | null;
  const sent: Sent[] = [];
  const target = owner as { query: (...a: unknown[]) => unknown };
  const original = target.query;
  jest.spyOn(target, 'query').mockImplementation(function (this: unknown, ...args: unknown[]) {
    if (typeof args[0] === 'string') sent.push({ on: this, text: args[0], params: Array.isArray(args[1]) ? args[1] : undefined });
    // A prepared statement comes in pg's config form (docs/storage.md#prepared-statements).
    else if (typeof args[0] === 'object' && args[0] !== null && typeof (args[0] as { text?: unknown }).text === 'string') {
      const config = args[0] as { text: string; values?: unknown[] };
      sent.push({ on: this, text: config.text, params: config.values });
    }
    return original.apply(this, args);
  });
  return sent;
}

let postgres: PostgresServer;
let dir: string;

beforeAll(async () => {
  postgres = await startPostgres();
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-indexes-'));
}, 120_000);

afterAll(async () => {
  jest.restoreAllMocks();
  await postgres?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function indexedQueries(
  source: string,
  explain: (sent: Sent, text: string) => Promise<string>,
  sent: Sent[],
  fill: (sql: string) => Promise<unknown>,
) {
  const served = await serve(parseServeArgs(['serve', source, '--port', '0']), CONFIG);
  try {
    const get = async (uri: string) => {
      const res = await fetch(served.url + uri, { headers: { accept: 'application/json;raw=true' } });
      return res.status === 204 ? [] : ((await res.json()) as unknown);
    };
    expect(await get('/posts')).toEqual([]);
    await fill(
      `INSERT INTO ${table} (body, key) SELECT json_build_object('id', i, 'author', 'a' || (i % 100), 'views', (i * 7919) % 100000)::text, jsonb_build_array(i) FROM generate_series(1, ${ROWS}) i`,
    );
    await fill(`ANALYZE ${table}`);
    for (const [uri, expected] of [
      ['/posts/views=7919/select=id', [{ id: 1 }]],
      ['/posts/author=a7/order_desc=views&limit=2&select=views', [{ views: 99933 }, { views: 99633 }]],
      ['/posts/views>99990/order_asc=views&select=id,views', [{ id: 11605, views: 99995 }]],
    ] as const) {
      sent.length = 0;
      expect({ uri, body: await get(uri) }).toEqual({ uri, body: expected });
      const reads = sent.filter((s) => s.text.startsWith('SELECT') && s.text.includes(table));
      expect(reads.length).toBeGreaterThan(0);
      for (const read of reads) {
        const plan = await explain(read, `EXPLAIN ${read.text}`);
        expect({ uri, plan }).toEqual({
          uri,
          plan: expect.stringMatching(/(Bitmap Index Scan on|Index (Only )?Scan( Backward)? using) rx_/),
        });
        expect(plan).not.toMatch(/Seq Scan/);
      }
    }
  } finally {
    await served.close();
  }
}

test('serve postgres://: the config indexes are built and serve filter and order', async () => {
  const sent = recordQueries(pg.Client.prototype);
  const { host, port, user, password } = postgres.config;
  const pool = postgres.pool();
  await pool.query('CREATE DATABASE indexed');
  const admin = postgres.pool({ database: 'indexed' });
  await indexedQueries(
    `postgres://${user}:${password}@${host}:${port}/indexed`,
    async (s, text) => (await admin.query(text, s.params)).rows.map((r) => Object.values(r)[0]).join('\n'),
    sent,
    (sql) => admin.query(sql),
  );
  const indexes = (await admin.query(`SELECT indexdef FROM pg_indexes WHERE tablename = $1`, [table])).rows.map((r) => r.indexdef);
  expect(indexes.filter((d: string) => /rx_/.test(d))).toHaveLength(2);
  jest.restoreAllMocks();
});

test('serve pglite:DIR: the same', async () => {
  const probe = await openPglite();
  const sent = recordQueries(Object.getPrototypeOf(probe) as object);
  await probe.close();
  const db = () => sent.find((s) => s.text.includes(table))!.on as { query(text: string, params?: unknown[]): Promise<{ rows: object[] }> };
  await indexedQueries(
    `pglite:${path.join(dir, 'pg')}`,
    async (s, text) => (await db().query(text, s.params)).rows.map((r) => Object.values(r)[0]).join('\n'),
    sent,
    (sql) => db().query(sql),
  );
  jest.restoreAllMocks();
});
