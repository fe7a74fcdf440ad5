// CLI writes by data-file size (issue 15 item 3, issue 17): for each size, serve a JSON
// file of N entities with the built CLI and measure, with one reader GETting
// `/items/_/limit=1` (the first page of one entity: a cheap request) in a loop all along:
//   1. quiet: the reader alone for 1 s (the machine's own latency);
//   2. writes: concurrent POSTs for a few seconds: writes/s, worst write;
//   3. compaction: the writers stop, the server writes its journal into the file (the
//      reader goes on until the journal is gone): how long, and the GET latency meanwhile.
// GET latency is given as p99 / max in ms for each phase.
//   pnpm build && node bench/cli-writes.mjs [--sizes=1000,10000,100000,1000000] [--seconds=4] [--writers=8]
//     [--key=id|generated|none] [--cli=path/to/cli.js] [--json]
// --json: after the table, one line of JSON ({ mode, rows: [{ size, writesPerSecond, writesPerCpu }], load }),
// for `pnpm bench` (bench/run.mjs, row `cliwrites`).
// --key=generated: the stored entities have `id` (the key), each POST leaves it out, so the
// server generates the next number.
// --key=none: entities without `id`, so the resource has no key and a POST checks no key
// (with `id`, the core checks the new key is free before each insert, one insert at a time).
// The client is node:http with a keep-alive agent: global fetch (undici) cost the client
// more CPU per request than the server spent on a write, so it measured itself.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const SIZES = arg('sizes', '1000,10000,100000,1000000').split(',').map(Number);
const SECONDS = Number(arg('seconds', '4'));
const WRITERS = Number(arg('writers', '8'));
const MODE = arg('key', 'id');
const KEYED = MODE !== 'none';
const CLI = path.resolve(arg('cli', path.join(path.dirname(fileURLToPath(import.meta.url)), '../packages/cli/dist/cli.js')));
const HEADERS = { 'content-type': 'application/json', accept: 'application/json;raw=true' };
const AGENT = new http.Agent({ keepAlive: true, maxSockets: WRITERS + 1 });

/** One request over the keep-alive agent: its status once the body is read. */
function send(url, method, pathname, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${pathname}`, { method, agent: AGENT, headers: HEADERS }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(body);
  });
}

function start(file) {
  const child = spawn(process.execPath, [CLI, 'serve', file, '--port', '0', '-q'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve({ child, url: m[0] });
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
}

/** GETs in a loop while `going()`; returns the latencies in ms. */
async function read(url, going) {
  const times = [];
  while (going()) {
    const t = performance.now();
    const status = await send(url, 'GET', '/items/_/limit=1');
    if (status !== 200) throw new Error(`GET /items/_/limit=1 answered ${status}`);
    times.push(performance.now() - t);
  }
  return times;
}

/** CPU seconds a process has used (user + system, from /proc; NaN elsewhere): writes per server CPU-second hold under load. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

function tail(times) {
  if (times.length === 0) return '-';
  const sorted = times.slice().sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
  return `${p99.toFixed(0)} / ${sorted[sorted.length - 1].toFixed(0)}`;
}

async function measure(size, dir) {
  const file = path.join(dir, `data-${size}.json`);
  const items = Array.from({ length: size }, (_, i) =>
    KEYED ? { id: i, name: `item ${i}`, price: i % 1000 } : { name: `item ${i}`, price: i % 1000 },
  );
  await writeFile(file, JSON.stringify({ items }));
  const { child, url } = await start(file);
  try {
    const quietEnd = Date.now() + 1000;
    const quiet = await read(url, () => Date.now() < quietEnd);

    const end = Date.now() + SECONDS * 1000;
    let writes = 0;
    let worstWrite = 0;
    let next = size;
    const writer = async () => {
      while (Date.now() < end) {
        const t = performance.now();
        const body = MODE === 'id' ? { id: next++, name: 'new', price: 1 } : { name: `new ${next++}`, price: 1 };
        const status = await send(url, 'POST', '/items', JSON.stringify(body));
        if (status !== 201) throw new Error(`POST answered ${status}`);
        worstWrite = Math.max(worstWrite, performance.now() - t);
        writes++;
      }
    };
    const t0 = performance.now();
    const cpu0 = cpuSeconds(child.pid);
    const [during] = await Promise.all([read(url, () => Date.now() < end), ...Array.from({ length: WRITERS }, writer)]);
    const seconds = (performance.now() - t0) / 1000;
    const serverCpu = cpuSeconds(child.pid) - cpu0;

    // The journal is written into the file once writes pause: GETs go on meanwhile.
    const journal = `${file}.journal`;
    const t1 = performance.now();
    const limit = t1 + 300_000;
    const compacting = existsSync(journal) ? await read(url, () => existsSync(journal) && performance.now() < limit) : [];
    const compactMs = existsSync(journal) ? null : performance.now() - t1;
    return { writesPerSecond: writes / seconds, writesPerCpu: writes / serverCpu, worstWrite, quiet, during, compacting, compactMs };
  } finally {
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  }
}

const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-cli-writes-'));
try {
  const mode = { id: 'keyed (id in each POST)', generated: 'keyed, the server generating each id', none: 'no key' }[MODE];
  console.log(`${mode}, ${WRITERS} writers, ${SECONDS} s; GET latency p99 / max ms; load average ${os.loadavg()[0].toFixed(2)}`);
  console.log(
    '| entities | writes/s | writes per server CPU-s | worst write ms | GET quiet | GET during writes | GET during compaction | pause + compaction ms |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  const rows = [];
  for (const size of SIZES) {
    const r = await measure(size, dir);
    rows.push({ size, writesPerSecond: r.writesPerSecond, writesPerCpu: r.writesPerCpu });
    console.log(
      `| ${size.toLocaleString('en')} | ${r.writesPerSecond.toFixed(1)} | ${r.writesPerCpu.toFixed(0)} | ${r.worstWrite.toFixed(0)} | ${tail(r.quiet)} | ${tail(r.during)} | ${tail(r.compacting)} | ${r.compactMs === null ? '-' : r.compactMs.toFixed(0)} |`,
    );
  }
  console.log(`load average at the end ${os.loadavg()[0].toFixed(2)}`);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ mode: MODE, rows, load: os.loadavg()[0] }));
} finally {
  AGENT.destroy();
  await rm(dir, { recursive: true, force: true });
}
