import type pg from 'pg';
import { createService } from '@resourcery/core';
import { createSqlStorage } from '@resourcery/sql';
import { startPostgres, type PostgresServer } from './postgres';
import { call } from './support';

// How the SQL storage uses a `pg` pool's connections (packages/sql/src/client.ts): a
// connection that fails while a statement runs on it leaves the pool, also now that a
// named statement goes to pg as its own Query and an idle connection is taken without a
// timer (statements.test.ts: the names; outage.test.ts: the timer when none is idle).
jest.setTimeout(60_000);

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await server.stop();
});

test("a connection that emits 'error' while a statement runs on it leaves the pool; the next statement gets another", async () => {
  const pool = server.pool({ max: 1 });
  const service = createService();
  service.addResource({ name: 'Person', storage: createSqlStorage({ client: pool, table: 'session_broken' }) });
  expect((await call(service, 'POST', '/Person', { Name: 'a' })).status).toBe(201);
  const first = await pool.connect();
  first.release();
  let broke = false;
  pool.once('acquire', (client: pg.PoolClient) => {
    // The server drops the connection mid-statement (as a failover would): pg emits 'error' on it.
    setImmediate(() => {
      broke = true;
      client.emit('error', new Error('Connection terminated unexpectedly'));
    });
  });
  const res = await call(service, 'GET', '/Person');
  expect(broke).toBe(true);
  expect([200, 503]).toContain(res.status);
  // The broken connection was destroyed, not put back: the pool opens a new one.
  expect(pool.totalCount).toBe(0);
  expect((await call(service, 'GET', '/Person')).json).toEqual([{ Name: 'a' }]);
  const again = await pool.connect();
  expect(again).not.toBe(first);
  again.release();
});
