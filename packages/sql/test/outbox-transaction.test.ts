import type pg from 'pg';
import { createService, type Service } from '@resourcery/core';
import { createSqlStorage, tableNameFor } from '@resourcery/sql';
import { startPostgres, type PostgresServer } from './postgres';
import { call } from './support';

// The transactional outbox (issue 25 item 6, docs/webhooks.md): an entity write and the
// webhook outbox messages of its event commit in one transaction on SQL storage, so a
// connection or instance lost between the two can never leave a committed row whose
// event no webhook will ever get.
jest.setTimeout(60_000);

let server: PostgresServer;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startPostgres();
  pool = server.pool({ max: 6 });
});

afterAll(async () => {
  await server.stop();
});

let prefixes = 0;

/** Person on PostgreSQL, its webhook outbox in the same database; deliveries land in /Seen (memory). */
async function instance(): Promise<{ service: Service; person: string; outbox: string }> {
  const prefix = `txo${++prefixes}_`;
  const service = createService({ adminStorage: (name) => createSqlStorage({ client: pool, table: tableNameFor(name, prefix) }) });
  const person = tableNameFor('Person', prefix);
  service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: pool, table: person }) });
  service.addResource({ name: 'Seen' });
  const hook = await call(service, 'POST', '/Service.Admin.Webhook', { Destination: '/Seen', EventSelector: '/Person.Inserted' });
  expect(hook.status).toBe(201);
  return { service, person, outbox: tableNameFor('Service.Admin.WebhookOutbox', prefix) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server process of the first statement of `pattern` that waits for a lock. */
async function waitingOnLock(pattern: string): Promise<number> {
  for (;;) {
    const { rows } = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1 LIMIT 1`,
      [pattern],
    );
    if (rows.length > 0) return rows[0].pid;
    await sleep(20);
  }
}

test('a POST whose connection is lost while its outbox messages are written commits neither: every committed row reaches the webhook', async () => {
  const { service, person, outbox } = await instance();
  expect((await call(service, 'POST', '/Person', { Id: 1 })).status).toBe(201);
  await service.webhooks.idle();
  // Another session holds the outbox: the POST's outbox insert waits, and its connection is cut there.
  const locker = await pool.connect();
  let answer: { status: number };
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${outbox} IN EXCLUSIVE MODE`);
    const posting = call(service, 'POST', '/Person', { Id: 2 });
    const pid = await waitingOnLock(`INSERT INTO "${outbox}"%`);
    await locker.query('SELECT pg_terminate_backend($1)', [pid]);
    await locker.query('COMMIT');
    answer = await posting;
  } finally {
    locker.release();
  }
  expect((await call(service, 'POST', '/Person', { Id: 3 })).status).toBe(201);
  await service.webhooks.idle();
  const committed = (await pool.query<{ id: number }>(`SELECT (doc ->> 'Id')::int AS id FROM ${person} ORDER BY 1`)).rows.map((r) => r.id);
  const seen = ((await call(service, 'GET', '/Seen/_/select=Id&order_asc=Id')).json as Array<{ Id: number }>).map((e) => e.Id);
  // Before: the row of Id 2 was committed on its own, its outbox insert failed, the POST said 201 and no webhook ever heard of it.
  expect(seen).toEqual(committed);
  expect(committed).toEqual([1, 3]);
  expect(answer.status).toBe(503);
  await service.close();
});

test('an entity write and its outbox messages are one transaction: the row is not visible while its messages wait', async () => {
  const { service, person, outbox } = await instance();
  const locker = await pool.connect();
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${outbox} IN EXCLUSIVE MODE`);
    const posting = call(service, 'POST', '/Person', [{ Id: 7 }, { Id: 8 }]);
    await waitingOnLock(`INSERT INTO "${outbox}"%`);
    // Before: the rows were committed already, seen by every other session.
    expect((await pool.query(`SELECT 1 FROM ${person}`)).rows).toEqual([]);
    await locker.query('COMMIT');
    expect((await posting).status).toBe(201);
  } finally {
    locker.release();
  }
  await service.webhooks.idle();
  expect((await call(service, 'GET', '/Seen/_/select=Id&order_asc=Id')).json).toEqual([{ Id: 7 }, { Id: 8 }]);
  await service.close();
});
