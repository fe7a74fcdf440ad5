import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createService, type Storage } from '@resourcery/core';
import type { SelectQuery } from '@resourcery/core/storage';
import { createSqlStorage, tableNameFor } from '@resourcery/sql';
import { startPostgres, type PostgresServer } from './postgres';
import { call } from './support';

// Closing a service over SQL storage (docs/deployment.md#shutting-down): service.close()
// stops the webhook deliveries (attempts, lease renewals, sweeps in flight) before it
// resolves, so the app may end its pool right after it and nothing of the service uses
// the pool any more. Before, a sweep or a renewal still running when close() resolved met
// the ended pool and printed `ResourceryWebhookWarning: Cannot use a pool after calling end`.
jest.setTimeout(60_000);

let server: PostgresServer;
let receiver: Server;
let destination: string;

beforeAll(async () => {
  server = await startPostgres();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  destination = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});

afterAll(async () => {
  receiver.close();
  await server.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A storage whose selects wait `ms` first: the outbox's sweep is still running when close() is called. */
function slowSelects<S extends Storage>(storage: S, ms: number): S {
  return new Proxy(storage, {
    get(target, name) {
      if (name === 'select') return async (query: SelectQuery) => (await sleep(ms), target.select(query));
      const value = Reflect.get(target, name) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

test('service.close() stops every delivery, a sweep in flight too, before it resolves: ending the pool right after emits no warning', async () => {
  // The library emits its warnings through process.emitWarning (webhooks/delivery.ts).
  const emitted = jest.spyOn(process, 'emitWarning');
  try {
    const pool = server.pool({ max: 3 });
    const prefix = 'close_';
    const service = createService({
      adminStorage: (name) => {
        const storage = createSqlStorage({ client: pool, table: tableNameFor(name, prefix) });
        return name === 'Service.Admin.WebhookOutbox' ? slowSelects(storage, 300) : storage;
      },
      webhooks: { sweepIntervalMs: 50 },
      allowPrivateDestinations: true,
    });
    service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: pool, table: `${prefix}person` }) });
    expect(
      (await call(service, 'POST', '/Service.Admin.Webhook', { Destination: destination, EventSelector: '/Person.Inserted' })).status,
    ).toBe(201);
    expect((await call(service, 'POST', '/Person', { Id: 1 })).status).toBe(201);
    await service.webhooks.idle();
    // A sweep (every 50 ms, its select taking 300 ms) is running now.
    await sleep(120);
    await service.close();
    await pool.end();
    // Whatever of the service still ran would meet the ended pool now.
    await sleep(600);
    const warnings = emitted.mock.calls.map((c) => String(c[0]));
    // Before: "Webhook delivery: Cannot use a pool after calling end on the pool", from the sweep close() did not wait for.
    expect(warnings).toEqual([]);
  } finally {
    emitted.mockRestore();
  }
});
