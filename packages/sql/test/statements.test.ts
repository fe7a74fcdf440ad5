import type pg from 'pg';
import { createService } from '@resourcery/core';
import { createSqlStorage } from '@resourcery/sql';
import { startPostgres, type PostgresServer } from './postgres';
import { call } from './support';

// What the SQL storage sends a `pg` pool per request (issue 30, docs/storage.md#prepared-statements):
// selects as prepared statements, at most 64 texts per storage; a POST with a generated
// key reserves its number in a transaction that does not wait for the disk, and inserts
// one entity in one statement (no BEGIN/COMMIT around it).
jest.setTimeout(60_000);

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await server.stop();
});

/** A pool whose connections log each statement: its text, its name when prepared, and synchronous_commit as the statement found it. */
function logged(pool: pg.Pool): { pool: pg.Pool; sent: Array<{ text: string; name?: string }> } {
  const sent: Array<{ text: string; name?: string }> = [];
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const proxy = new Proxy(pool, {
    get(target, key) {
      if (key === 'connect')
        return async () => {
          const client = await connect();
          return new Proxy(client, {
            get(c, k) {
              if (k !== 'query')
                return (Reflect.get(c, k) as unknown as { bind?: unknown }) && typeof Reflect.get(c, k) === 'function'
                  ? (Reflect.get(c, k) as (...a: unknown[]) => unknown).bind(c)
                  : Reflect.get(c, k);
              return (config: string | { text: string; name?: string }, values?: unknown[]) => {
                sent.push(typeof config === 'string' ? { text: config } : { text: config.text, name: config.name });
                return (c.query as (a: unknown, b?: unknown) => unknown)(config, values);
              };
            },
          });
        };
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { pool: proxy, sent };
}

test('selects run as prepared statements, at most 64 texts per storage', async () => {
  const base = server.pool({ max: 1 });
  const { pool, sent } = logged(base);
  const service = createService();
  service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: pool, table: 'prepared_person' }) });
  expect(
    (
      await call(service, 'POST', '/Person', [
        { Id: 1, Age: 3 },
        { Id: 2, Age: 4 },
      ])
    ).status,
  ).toBe(201);
  sent.length = 0;
  expect((await call(service, 'GET', '/Person/2')).json).toEqual([{ Id: 2, Age: 4 }]);
  expect((await call(service, 'GET', '/Person/1')).json).toEqual([{ Id: 1, Age: 3 }]);
  const selects = sent.filter((s) => s.text.startsWith('SELECT'));
  expect(selects).toHaveLength(2);
  // One name for one text: the connection parses it once.
  expect(selects[0].name).toMatch(/^resourcery_[0-9a-f]{32}$/);
  expect(selects[1].name).toBe(selects[0].name);
  const prepared = async () =>
    (await base.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'resourcery_%'`)).rows[0].n;
  expect(await prepared()).toBe(1);
  // 100 query shapes (an IN list of 1 to 100 keys): the first 64 texts are prepared, the rest run unnamed, with the same answers.
  for (let n = 1; n <= 100; n++) {
    const res = await call(service, 'GET', `/Person/Id=${Array.from({ length: n }, (_, i) => i + 1).join('|')}`);
    expect(res.json).toHaveLength(Math.min(n, 2));
  }
  expect(await prepared()).toBe(64);
  await base.end();
});

test('storages of two copies of the package share a pool: one name is never two texts', async () => {
  const base = server.pool({ max: 1 });
  const { pool, sent } = logged(base);
  // A second copy of the package, as a duplicated dependency gives (its own module state).
  let copy: typeof import('@resourcery/sql') | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a second instance of the module, which import cannot give
    copy = require('@resourcery/sql');
  });
  expect(copy!.createSqlStorage).not.toBe(createSqlStorage);
  const service = createService();
  service.addResource({ name: 'A', storage: createSqlStorage({ client: pool, table: 'copies_a' }) });
  service.addResource({ name: 'B', storage: copy!.createSqlStorage({ client: pool, table: 'copies_b' }) });
  expect((await call(service, 'POST', '/A', { Name: 'a' })).status).toBe(201);
  expect((await call(service, 'POST', '/B', { Name: 'b' })).status).toBe(201);
  sent.length = 0;
  // Each copy's first statement text: before, both were named resourcery_1 on the one connection.
  expect((await call(service, 'GET', '/A')).json).toEqual([{ Name: 'a' }]);
  expect((await call(service, 'GET', '/B')).json).toEqual([{ Name: 'b' }]);
  expect((await call(service, 'GET', '/A')).json).toEqual([{ Name: 'a' }]);
  const named = sent.filter((s) => s.name !== undefined);
  expect(named).toHaveLength(3);
  expect(named[0].name).not.toBe(named[1].name);
  expect(named[2].name).toBe(named[0].name);
  await base.end();
});

test('a page (filter, order, limit) is planned once for any values: its limit is in the text, not a parameter', async () => {
  const base = server.pool({ max: 1 });
  const { pool, sent } = logged(base);
  const storage = createSqlStorage({ client: pool, table: 'planned_person' });
  const service = createService();
  service.addResource({
    name: 'Person',
    storage,
    schema: { type: 'object', properties: { Id: { type: 'integer' }, Age: { type: 'integer' }, Score: { type: 'integer' } } },
    indexes: ['Id', ['Age', 'Score']],
  });
  await storage.ready();
  await base.query(
    `INSERT INTO planned_person (body) SELECT '{"Id":' || i || ',"Age":' || (i % 50) || ',"Score":' || ((i * 7919) % 1000) || '}' FROM generate_series(1, 20000) i`,
  );
  await base.query('ANALYZE planned_person');
  const expected = (age: number) =>
    Array.from({ length: 20000 }, (_, i) => ({ Id: i + 1, Age: (i + 1) % 50, Score: ((i + 1) * 7919) % 1000 }))
      .filter((e) => e.Age === age)
      .sort((a, b) => b.Score - a.Score || a.Id - b.Id)
      .slice(0, 10);
  sent.length = 0;
  for (let age = 0; age < 12; age++)
    expect((await call(service, 'GET', `/Person/Age=${age}/order_desc=Score&limit=10`)).json).toEqual(expected(age));
  const names = new Set(sent.filter((s) => s.text.startsWith('SELECT')).map((s) => s.name));
  expect(names.size).toBe(1);
  expect(sent.find((s) => s.text.startsWith('SELECT'))!.text).toMatch(/ LIMIT 10$/);
  // After five plans for the values given, PostgreSQL keeps one plan for any values when it costs no more;
  // with the limit as a parameter it could not cost one and planned all twelve requests anew.
  const [row] = (
    await base.query<{ generic_plans: string; custom_plans: string }>(
      'SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name = $1',
      [[...names][0]],
    )
  ).rows;
  expect(Number(row.generic_plans)).toBeGreaterThanOrEqual(6);
  expect(Number(row.custom_plans)).toBeLessThanOrEqual(6);
  await base.end();
});

test('a POST with a generated key: the reservation does not wait for the disk, the insert is one statement', async () => {
  const base = server.pool({ max: 1 });
  const { pool, sent } = logged(base);
  const service = createService();
  service.addResource({ name: 'Item', key: 'Id', storage: createSqlStorage({ client: pool, table: 'generated_item' }) });
  expect((await call(service, 'POST', '/Item', { Name: 'first' })).status).toBe(201);
  sent.length = 0;
  const res = await call(service, 'POST', '/Item', { Name: 'second' });
  expect(res.status).toBe(201);
  expect(res.json).toEqual([{ Name: 'second', Id: 2 }]);
  const texts = sent.map((s) => s.text.split(' ')[0]);
  // Before: the reservation committed on its own (waiting for its flush) and the insert ran as BEGIN, INSERT, COMMIT.
  expect(texts).toEqual(['BEGIN', 'SET', 'SELECT', 'WITH', 'COMMIT', 'INSERT']);
  expect(sent[1].text).toBe('SET LOCAL synchronous_commit TO off');
  // The connection keeps the server's setting outside that transaction.
  expect((await base.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
  // A taken key is still refused whole.
  expect((await call(service, 'POST', '/Item', { Id: 2, Name: 'again' })).status).toBe(409);
  expect((await call(service, 'GET', '/Item/_/select=Id,Name')).json).toEqual([
    { Id: 1, Name: 'first' },
    { Id: 2, Name: 'second' },
  ]);
  await base.end();
});
