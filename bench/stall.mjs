// Stalls (issue 24 item 5): how long a cheap GET waits beside one client whose short
// request makes the server do a lot of work. The server (node adapter, 10,000 entities of
// about 1.3 KB in memory) runs in a child process of its own, each attacking client in
// another, and this process only probes: a sequential `GET /Person/Id=5` on a keep-alive
// connection every PROBE_GAP_MS, whose latencies give the p50/p99 printed beside each attack.
//   pnpm build && node bench/stall.mjs [--seconds=6] [--json] [--only=baseline,limit,...] [--cpu-prof=DIR]
// --cpu-prof=DIR: the server of each row writes a CPU profile into DIR (node --cpu-prof).
// Goal: p99 of the cheap GET < 100 ms beside any one of the attacks.
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { people, RESULTS_DIR } from './lib/data.mjs';
import { arg, flags, fmt, table } from './lib/stats.mjs';

const SELF = fileURLToPath(import.meta.url);
const EXCEL = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const ENTITIES = 10_000;
const EXCEL_ROWS = 50_000;
const POST_ENTITIES = 100_000;
const PROBE = '/Person/Id=5';
const PROBE_GAP_MS = 5;
const FIELDS = 30;
const fieldNames = Array.from({ length: FIELDS }, (_, i) => `P${i}`);
/** 60 locators: each short property and its length. */
const ADD_60 = [...fieldNames, ...fieldNames.map((f) => `${f}.Length`)].join(',');

/** What each attacking client sends, over and over, until it is stopped (one request at a time unless said). */
const ATTACKS = {
  baseline: { what: 'no attack', requests: null },
  limit: { what: 'GET limit=99999999 (13 MB JSON)', requests: () => [{ path: '/Person/_/limit=99999999' }] },
  distinct: {
    what: 'select=Bio,City&distinct=true&order_asc=Bio',
    requests: () => [{ path: '/Person/_/select=Bio,City&distinct=true&order_asc=Bio' }],
  },
  add60: { what: '60 add locators', requests: () => [{ path: `/Person/_/add=${ADD_60}` }] },
  post: {
    what: `POST of ${POST_ENTITIES.toLocaleString('en-US')} entities (10 MiB JSON)`,
    // The same keys every time: the first is written (201), the next are 409 once read and checked.
    requests: () => [{ path: '/Sink', method: 'POST', headers: { 'content-type': 'application/json' }, body: postBody() }],
  },
  excel: {
    what: `Excel import, ${EXCEL_ROWS.toLocaleString('en-US')} rows (POST)`,
    requests: (workbook) => [{ path: '/Import', method: 'POST', headers: { 'content-type': EXCEL }, body: workbook }],
  },
  parallel: {
    what: '200 parallel limit=2000',
    requests: () => Array.from({ length: 200 }, () => ({ path: '/Person/_/limit=2000' })),
  },
};

let posted = null;
/** About 10 MiB of JSON: 100,000 entities of about 100 bytes, made once per attacking process. */
function postBody() {
  posted ??= Buffer.from(
    JSON.stringify(
      Array.from({ length: POST_ENTITIES }, (_, i) => ({
        Id: i + 1,
        Name: `person ${i}`,
        Email: `p${i}@example.com`,
        City: ['Oslo', 'Lima', 'Pune'][i % 3],
        Note: 'n'.repeat(30),
      })),
    ),
  );
  return posted;
}

/** ~1.3 KB entities: people's fields, 30 short properties and a Bio of prose. */
function entities(count) {
  const words = 'the quick brown fox jumps over a lazy dog while seven wizards quietly hex jolly bumpkins'.split(' ');
  return people(count).map((p, i) => {
    const e = { Id: i + 1, Name: p.Name, Age: p.Age, Email: p.Email, City: p.City, Active: p.Active };
    for (let f = 0; f < FIELDS; f++) e[fieldNames[f]] = `v${(i * 31 + f * 7) % 997}`;
    let bio = '';
    for (let w = 0; bio.length < 900; w++) bio += `${words[(i * 13 + w * 5) % words.length]} `;
    e.Bio = `${i % 50} ${bio}`;
    return e;
  });
}

// ---- the server (child process) ---------------------------------------------------------

async function serve() {
  const { createService, MemoryStorage } = await import('@resourcery/core');
  const { createServer } = await import('@resourcery/node');
  const service = createService({ events: false, maxBodyBytes: 64 * 1024 * 1024 });
  service.addResource({ name: 'Person', storage: new MemoryStorage(entities(ENTITIES)) });
  service.addResource({ name: 'Import', storage: new MemoryStorage([]) });
  service.addResource({ name: 'Sink', key: 'Id', storage: new MemoryStorage([]) });
  const server = createServer(service);
  server.keepAliveTimeout = 60_000;
  // Profiled (--cpu-prof): the event loop's stalls are noted too, to find them in the profile.
  const stalls = process.env.STALL_GAPS ? noteStalls() : null;
  // Asked to exit (not killed): a --cpu-prof profile is written at a normal exit only.
  process.on('message', (m) => {
    if (m !== 'exit') return;
    if (stalls) writeFileSync(process.env.STALL_GAPS, JSON.stringify(stalls));
    process.exit(0);
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

/**
 * The turns of the event loop that took over STALL_MS: [start, end] in microseconds of the
 * monotonic clock, the clock of a --cpu-prof profile's timestamps (bench/lib/stalls.mjs
 * prints what the profile sampled in each).
 */
function noteStalls() {
  const STALL_MS = 20;
  const stalls = [];
  let last = process.hrtime.bigint();
  const tick = () => {
    const now = process.hrtime.bigint();
    if (now - last > BigInt(STALL_MS * 1e6)) stalls.push([Number(last / 1000n), Number(now / 1000n)]);
    last = now;
    setImmediate(tick).unref();
  };
  setImmediate(tick).unref();
  return stalls;
}

// ---- an attacking client (child process) ------------------------------------------------

function send(agent, port, { path: p, method = 'GET', headers = {}, body }) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: p, method, headers, agent }, (res) => {
      let bytes = 0;
      res.on('data', (c) => {
        bytes += c.length;
      });
      res.on('end', () => resolve({ status: res.statusCode, bytes }));
      res.on('error', () => resolve({ status: 0, bytes }));
    });
    req.on('error', () => resolve({ status: 0, bytes: 0 }));
    req.end(body);
  });
}

async function attack(name, port, workbookFile) {
  const workbook = workbookFile ? readFileSync(workbookFile) : null;
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  let rounds = 0;
  let bytes = 0;
  const statuses = {};
  let stop = false;
  process.on('message', (m) => {
    if (m === 'stop') stop = true;
  });
  process.send({ ready: true });
  while (!stop) {
    const answers = await Promise.all(ATTACKS[name].requests(workbook).map((r) => send(agent, port, r)));
    rounds++;
    for (const a of answers) {
      bytes += a.bytes;
      statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    }
  }
  process.send({ rounds, bytes, statuses });
}

// ---- the probe and the table (this process) ---------------------------------------------

function once(proc) {
  return new Promise((resolve, reject) => {
    proc.once('message', resolve);
    proc.once('exit', (code) => reject(new Error(`child exited (${code})`)));
  });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function probe(port, seconds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    const { status } = await send(agent, port, { path: PROBE });
    if (status !== 200) throw new Error(`the probe answered ${status}`);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, PROBE_GAP_MS));
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { n: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) };
}

async function measure(name, seconds, workbookFile, profileDir) {
  const execArgv = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=stall-${name}.cpuprofile`] : [];
  const env = profileDir ? { ...process.env, STALL_GAPS: path.join(profileDir, `stall-${name}.stalls.json`) } : process.env;
  const server = fork(SELF, ['--serve'], { stdio: 'inherit', execArgv, env });
  const { port } = await once(server);
  let client = null;
  try {
    // Warm both paths: the probe and the attack's request once.
    await probe(port, 0.3);
    if (ATTACKS[name].requests !== null) {
      client = fork(SELF, [`--attack=${name}`, `--port=${port}`, `--workbook=${workbookFile}`], { stdio: 'inherit' });
      await once(client);
      // Let the attack get under way before measuring.
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const figures = await probe(port, seconds);
    let attacked = null;
    if (client) {
      const done = once(client);
      client.send('stop');
      attacked = await done;
    }
    return { ...figures, attacked };
  } finally {
    client?.kill();
    if (profileDir) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.send('exit');
      await exited;
    } else server.kill();
  }
}

/** The 50k-row workbook the excel attack posts, written by the service's own Excel writer. */
async function writeWorkbook() {
  const { createService, MemoryStorage } = await import('@resourcery/core');
  const service = createService({ events: false });
  const rows = people(EXCEL_ROWS).map(({ id, ...rest }) => rest);
  service.addResource({ name: 'Person', storage: new MemoryStorage(rows) });
  const response = await service.handle({ method: 'GET', uri: '/Person', headers: { accept: EXCEL }, body: null });
  const chunks = [];
  if (typeof response.body === 'string' || response.body instanceof Uint8Array) chunks.push(Buffer.from(response.body));
  else for await (const c of response.body) chunks.push(Buffer.from(c));
  const file = path.join(RESULTS_DIR, 'stall-import.xlsx');
  writeFileSync(file, Buffer.concat(chunks));
  return file;
}

async function main() {
  const opts = flags();
  const seconds = arg('seconds', 6);
  const names = opts.only ?? Object.keys(ATTACKS);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(RESULTS_DIR, { recursive: true });
  const profileDir = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice(11) ?? null;
  const workbookFile = names.includes('excel') ? await writeWorkbook() : '';
  const load0 = os.loadavg()[0];
  const results = {};
  for (const name of names) {
    process.stderr.write(`${ATTACKS[name].what}...\n`);
    results[name] = await measure(name, seconds, workbookFile, profileDir);
  }
  const load1 = os.loadavg()[0];
  if (opts.json) {
    console.log(JSON.stringify({ seconds, load: [load0, load1], results }));
    return;
  }
  console.log(
    `GET ${PROBE} every ${PROBE_GAP_MS} ms for ${seconds} s beside one client; ${ENTITIES.toLocaleString('en-US')} entities of ~1.3 KB; load average ${load0.toFixed(1)} -> ${load1.toFixed(1)} on ${os.cpus().length} cores`,
  );
  const rows = names.map((name) => {
    const r = results[name];
    const a = r.attacked;
    const statuses = a
      ? Object.entries(a.statuses)
          .map(([s, n]) => `${n}x${s}`)
          .join(' ')
      : '';
    return [ATTACKS[name].what, r.n, fmt(r.p50), fmt(r.p99), fmt(r.max), a ? a.rounds : '', a ? fmt(a.bytes / 2 ** 20) : '', statuses];
  });
  console.log(table(['beside', 'probes', 'p50 ms', 'p99 ms', 'max ms', 'attack rounds', 'MiB sent', 'answers'], rows));
  console.log('\nGoal: p99 < 100 ms in every row.');
}

const serveFlag = process.argv.includes('--serve');
const attackName = process.argv.find((a) => a.startsWith('--attack='))?.slice(9);
if (serveFlag) await serve();
else if (attackName)
  await attack(attackName, arg('port', 0), process.argv.find((a) => a.startsWith('--workbook='))?.slice(11) || null).then(() =>
    process.exit(0),
  );
else await main();
