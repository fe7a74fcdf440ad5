import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createService } from '@resourcery/core';
import { createSqlStorage, tableNameFor } from '@resourcery/sql';
import { startPostgres, type PostgresServer } from './postgres';

// Lease heartbeat (issue 25 item 7, docs/webhooks.md): an instance renews the lease of a
// message while it sends it, so no other instance takes a slow delivery over; an instance
// killed mid-delivery stops renewing, and another one delivers the message once the
// lease ran out, with the same webhook-id. Before, the lease was the attempt timeout plus
// 60 s whatever the options, renewed never.
// Before, the second delivery came after 120 s (60 s timeout + 60 s): past this test's time.
jest.setTimeout(60_000);

let server: PostgresServer;
let receiver: Server;
let destination = '';
const arrivals: Array<{ id: string }> = [];
/** Answers held open: the first delivery never gets one (its sender is killed). */
const held: ServerResponse[] = [];
let answer = false;

beforeAll(async () => {
  server = await startPostgres();
  receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
    arrivals.push({ id: String(req.headers['webhook-id']) });
    req.resume();
    if (answer) res.end('ok');
    else held.push(res);
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  destination = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  receiver.closeAllConnections();
  receiver.close();
  await server.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(test: () => boolean): Promise<void> {
  while (!test()) await sleep(20);
}

/** An instance in a child process: resolves once it has raised its event. */
async function instanceProcess(prefix: string, webhooks: object): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(__dirname, 'webhook-instance.mjs'), JSON.stringify({ config: server.config, prefix, webhooks, destination })],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let errors = '';
  child.stderr!.on('data', (d) => (errors += d));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the instance exited (${code}): ${errors}`)));
  });
  expect(JSON.parse(line)).toEqual({ webhook: 201, person: 201 });
  return child;
}

test('a slow delivery stays with its sender (heartbeat); once the sender is killed, another instance delivers it after the lease', async () => {
  const prefix = 'lease_';
  const webhooks = { leaseMs: 1500, sweepIntervalMs: 100, timeoutMs: 60_000 };
  const pool = server.pool();
  // Instance B shares the database and looks for unleased messages ten times a second.
  const b = createService({
    allowPrivateDestinations: true,
    webhooks,
    adminStorage: (name) => createSqlStorage({ client: pool, table: tableNameFor(name, prefix) }),
  });
  const a = await instanceProcess(prefix, webhooks);
  try {
    await until(() => arrivals.length === 1);
    // Three leases long, A's attempt is still running: A renews its lease, so B leaves the message alone.
    await sleep(3 * webhooks.leaseMs);
    expect(arrivals).toHaveLength(1);
    answer = true;
    a.kill('SIGKILL');
    await once(a, 'exit');
    // B takes the message over once A's last lease ran out and delivers it: the same webhook-id, for the receiver to drop.
    await until(() => arrivals.length === 2);
    expect(arrivals[1].id).toBe(arrivals[0].id);
    await b.webhooks.idle();
    await sleep(2 * webhooks.leaseMs);
    // Delivered: removed from the outbox, never sent again.
    expect(arrivals).toHaveLength(2);
  } finally {
    if (a.exitCode === null) a.kill('SIGKILL');
    await b.close();
  }
});
