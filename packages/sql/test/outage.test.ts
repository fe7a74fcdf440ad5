import pg from 'pg';
import { createService, type Service } from '@resourcery/core';
import { createSqlStorage } from '@resourcery/sql';
import { startPostgres, type PostgresServer } from './postgres';
import { call } from './support';

// PostgreSQL stopped and started again under writes (issue 25 items 1-2): no process dies,
// the requests in flight fail cleanly, and the service recovers without a restart.
jest.setTimeout(60_000);

let server: PostgresServer;
const pools: pg.Pool[] = [];
const crashes: unknown[] = [];
const crashed = (e: unknown) => crashes.push(e);

beforeAll(async () => {
  server = await startPostgres();
  process.on('uncaughtException', crashed);
});

afterAll(async () => {
  process.off('uncaughtException', crashed);
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
  await server.stop();
});

/** A pool as an app makes it from the docs: no 'error' listener of its own. */
function bare(options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ ...server.config, max: 4, ...options });
  pools.push(pool);
  return pool;
}

let tables = 0;
function serviceOn(pool: pg.Pool): Service {
  const service = createService();
  service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: pool, table: `outage_${++tables}` }) });
  return service;
}

/** POSTs one after another until `until` resolves; their statuses. */
async function writer(service: Service, until: Promise<void>, from: number): Promise<number[]> {
  const statuses: number[] = [];
  let done = false;
  void until.then(() => (done = true));
  for (let i = from; !done; i++) statuses.push((await call(service, 'POST', '/Person', { Id: i, Name: `n${i}` })).status);
  return statuses;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('the database stopped under transactional writes: no uncaught error, answers while down, recovery without restart', async () => {
  const pool = bare();
  const service = serviceOn(pool);
  expect((await call(service, 'POST', '/Person', { Id: 0 })).status).toBe(201);
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const writers = Array.from({ length: 6 }, (_, w) => writer(service, stopped, (w + 1) * 100_000));
  await sleep(300);
  await server.pause();
  await sleep(500);
  stop();
  const statuses = (await Promise.all(writers)).flat();
  expect(crashes).toEqual([]);
  // Written, or refused as unavailable: never a 500.
  expect(new Set(statuses)).toEqual(new Set([201, 503]));
  const down = await call(service, 'GET', '/Person/Id=0');
  expect(down.status).toBe(503);
  expect(down.headers['retry-after']).toBe('5');
  expect(down.json).toMatchObject({
    Status: 'fail',
    ErrorCode: 'ServiceUnavailable',
    Message: expect.stringMatching(/^The database is unavailable/),
  });
  expect(JSON.stringify(down.json)).not.toContain(String(server.config.password));
  // The Error records live in memory here: stored, and MoreInfoAt leads to the record.
  const record = await call(service, 'GET', (down.json as { MoreInfoAt: string }).MoreInfoAt);
  expect(record.json).toEqual([expect.objectContaining({ ErrorCode: 'ServiceUnavailable' })]);
  await server.resume();
  // The same service and pool, no restart: writes succeed again.
  expect((await call(service, 'POST', '/Person', { Id: 1 })).status).toBe(201);
  expect((await call(service, 'GET', '/Person/Id=1')).status).toBe(200);
  expect(crashes).toEqual([]);
});

test('no connection free within acquireTimeoutMs: 503 with Retry-After instead of waiting; answers again once one is free', async () => {
  const pool = bare({ max: 1 });
  const service = createService();
  service.addResource({ name: 'Person', storage: createSqlStorage({ client: pool, table: `outage_${++tables}`, acquireTimeoutMs: 300 }) });
  expect((await call(service, 'POST', '/Person', { Name: 'a' })).status).toBe(201);
  const held = await pool.connect();
  try {
    const busy = await call(service, 'GET', '/Person');
    expect([busy.status, busy.headers['retry-after'], (busy.json as { ErrorCode: string }).ErrorCode]).toEqual([
      503,
      '5',
      'ServiceUnavailable',
    ]);
    expect((busy.json as { Message: string }).Message).toContain('no connection of the pool was free within 300 ms');
  } finally {
    held.release();
  }
  expect((await call(service, 'GET', '/Person')).status).toBe(200);
});

test('an Error record that cannot be stored (its table is on the database that is down): no MoreInfoAt, no message pointing to one', async () => {
  const pool = bare();
  const service = createService({
    adminStorage: (name) => createSqlStorage({ client: pool, table: `outage_admin_${++tables}_${name.length}` }),
  });
  service.addResource({ name: 'Person', storage: createSqlStorage({ client: pool, table: `outage_${++tables}` }) });
  expect((await call(service, 'GET', '/Person')).status).toBe(204);
  await server.pause();
  try {
    const down = await call(service, 'GET', '/Person');
    expect(down.status).toBe(503);
    expect(down.json).not.toHaveProperty('MoreInfoAt');
    expect(down.headers).not.toHaveProperty('errorinfo');
    expect((down.json as { Message: string }).Message).not.toContain('MoreInfoAt');
  } finally {
    await server.resume();
    // Its webhook worker reads the admin tables on this pool: stopped before afterAll ends the pool.
    await service.close();
  }
});

test('service.ready() says whether the database answers: ready, not ready while it is down (no password shown), ready again', async () => {
  const pool = bare({ password: server.config.password });
  const service = serviceOn(pool);
  expect(await service.ready()).toEqual({ ready: true, storages: [{ resources: ['Person'], ready: true }] });
  await server.pause();
  try {
    const down = await service.ready({ timeoutMs: 3000 });
    expect(down.ready).toBe(false);
    expect(down.storages[0].message).toEqual(expect.any(String));
    expect(down.storages[0].message).not.toContain(String(server.config.password));
  } finally {
    await server.resume();
  }
  expect((await service.ready()).ready).toBe(true);
  // A service on memory storages only has nothing to check.
  expect(await createService().ready()).toEqual({ ready: true, storages: [] });
});
