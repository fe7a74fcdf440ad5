// The CLI against json-server 0.17.4 (npm `latest`) and 1.0.0-beta.3 (the last 1.x that
// runs on Node 20): reads (requests/s) and start-up time, each server on its own copy of
// the same generated file. Build first (`pnpm build`).
//   node bench/json-server.mjs [--quick] [--json] [--startup-only] [--startup-sizes=1000,100000] [--rounds=7]
// Start-up also gives each server's peak RSS at its first answer (VmHWM, Linux).
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { RESULTS_DIR, writeDataFile } from './lib/data.mjs';
import { BENCH, CLI, freePort, measure, request, startLoadGenerator, startServer } from './lib/http.mjs';
import { flags, fmt, median, table } from './lib/stats.mjs';

const JSON_SERVER_017 = path.join(BENCH, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');
const JSON_SERVER_1 = path.join(BENCH, 'node_modules', 'json-server-1', 'lib', 'bin.js');
const VERSION_1 = JSON.parse(readFileSync(path.join(BENCH, 'node_modules', 'json-server-1', 'package.json'), 'utf8')).version;

/**
 * The same question to each server, in its own words. "query": Age > 30, oldest first,
 * first 10 (json-server has no `>` on 0.17 but `_gte` on whole numbers is the same; 1.x
 * sorts descending with `-`). "by id": one entity by its id.
 */
const READS = {
  query: {
    resourcery: '/Person/Age>30/order_desc=Age&limit=10',
    v017: '/Person?Age_gte=31&_sort=Age&_order=desc&_limit=10',
    v1: '/Person?Age_gt=30&_sort=-Age&_limit=10',
  },
  'by id': {
    resourcery: '/Person/id=7',
    v017: '/Person/7',
    v1: '/Person/7',
  },
};

const SUBJECTS = [
  { key: 'resourcery', name: 'resourcery serve', spec: (file) => [CLI, ['serve', file, '--port', '0', '-q']] },
  {
    key: 'v017',
    name: 'json-server 0.17.4',
    spec: (file, port) => [JSON_SERVER_017, [file, '--port', String(port), '--host', '127.0.0.1', '--quiet']],
  },
  { key: 'v1', name: `json-server ${VERSION_1}`, spec: (file, port) => [JSON_SERVER_1, ['-p', String(port), '-h', '127.0.0.1', file]] },
];

/** Each server's file: a copy, because the servers may rewrite theirs (1.x turns ids into strings). */
function copyFor(key, data) {
  const file = path.join(RESULTS_DIR, `js-${key}-${path.basename(data)}`);
  copyFileSync(data, file);
  return file;
}

async function startAll(data) {
  const servers = [];
  for (const s of SUBJECTS) {
    const port = await freePort();
    const [script, args] = s.spec(copyFor(s.key, data), port);
    servers.push(await startServer(s.name, script, args, s.key === 'resourcery' ? {} : { port, readyPath: READS['by id'][s.key] }));
  }
  return servers;
}

/** What a server answered, as comparable rows: ids compared as text (1.x stores them as strings). */
function rows(body) {
  const parsed = JSON.parse(body);
  const list = Array.isArray(parsed) ? parsed : (parsed.Data ?? [parsed]);
  return JSON.stringify(list.map((e) => [String(e.id), e.Name, e.Age]));
}

async function reads(load, quick) {
  const data = writeDataFile('people-10k.json', 10_000);
  const servers = await startAll(data);
  const out = {};
  try {
    for (const [label, paths] of Object.entries(READS)) {
      const answers = await Promise.all(servers.map((s, i) => request(s.url, paths[SUBJECTS[i].key])));
      answers.forEach((a, i) => {
        if (a.status !== 200) throw new Error(`${servers[i].name}: ${paths[SUBJECTS[i].key]} answered ${a.status}`);
      });
      const expected = rows(answers[0].body);
      answers.forEach((a, i) => {
        if (rows(a.body) !== expected)
          throw new Error(`${servers[i].name} answers other entities for "${label}":\n${rows(a.body)}\n${expected}`);
      });
      const targets = Object.fromEntries(
        servers.map((s, i) => [SUBJECTS[i].key, { url: s.url, pid: s.pid, path: paths[SUBJECTS[i].key] }]),
      );
      out[label] = await measure(load, targets, quick ? { rounds: 3, duration: 1, warmup: 1 } : { rounds: 6, duration: 1.2, warmup: 1.5 });
    }
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
  return out;
}

/** A process's peak resident memory in MiB so far (VmHWM), or NaN where /proc is absent. */
function peakRss(pid) {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return Number.NaN;
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(status, 'utf8'))?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

/** CPU milliseconds a process has used, user + system (all its threads, GC included), or NaN where /proc is absent. */
function cpuMs(pid) {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return Number.NaN;
  const fields = readFileSync(stat, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Milliseconds from spawning the process to its first 200 answer to the "by id" read, polled every 2 ms. */
async function startupOnce(subject, data) {
  const port = await freePort();
  const file = copyFor(subject.key, data);
  const [script, args] = subject.spec(file, port);
  const began = performance.now();
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'ignore'], cwd: BENCH });
  let printed = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    printed += c;
  });
  try {
    const deadline = began + 300_000;
    for (;;) {
      if (performance.now() > deadline) throw new Error(`${subject.name}: not answering within 300 s`);
      if (child.exitCode !== null) throw new Error(`${subject.name} exited (${child.exitCode}): ${printed}`);
      const actual = subject.key === 'resourcery' ? /http:\/\/127\.0\.0\.1:(\d+)/.exec(printed)?.[1] : port;
      if (actual !== undefined) {
        const r = await request(`http://127.0.0.1:${actual}`, READS['by id'][subject.key]).catch(() => null);
        if (r?.status === 200) return { ms: performance.now() - began, cpuMs: cpuMs(child.pid), peakMb: peakRss(child.pid) };
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
  }
}

async function startup(quick) {
  const out = {};
  const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? (quick ? 3 : 7));
  const sizes = (process.argv.find((a) => a.startsWith('--startup-sizes='))?.slice(16) ?? '1000,100000').split(',').map(Number);
  for (const size of sizes) {
    const data = writeDataFile(`people-${size / 1000}k.json`, size);
    const runs = Object.fromEntries(SUBJECTS.map((s) => [s.key, []]));
    // Rounds alternate the order of the servers, so drift in the machine's load falls on all alike.
    for (let i = 0; i < rounds; i++) {
      for (const s of i % 2 === 0 ? SUBJECTS : [...SUBJECTS].reverse()) runs[s.key].push(await startupOnce(s, data));
    }
    out[size] = Object.fromEntries(
      SUBJECTS.map((s) => {
        const of = (k) => median(runs[s.key].map((r) => r[k]));
        return [s.key, { ms: of('ms'), cpuMs: of('cpuMs'), peakMb: of('peakMb') }];
      }),
    );
  }
  return out;
}

const opts = flags();
const loadStart = os.loadavg()[0].toFixed(2);
let result;
if (process.argv.includes('--startup-only')) result = { reads: {}, startup: await startup(opts.quick) };
else {
  const load = await startLoadGenerator();
  try {
    result = { reads: await reads(load, opts.quick), startup: await startup(opts.quick) };
  } finally {
    await load.stop();
  }
}
result.load = `${loadStart} -> ${os.loadavg()[0].toFixed(2)}`;
if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
else {
  const names = SUBJECTS.map((s) => s.name);
  const readRows = Object.entries(result.reads).map(([label, m]) => [
    `GET ${label} (10k), req/s`,
    ...SUBJECTS.map((s) => fmt(m.rps[s.key])),
  ]);
  const cpuRows = Object.entries(result.reads).map(([label, m]) => [
    `GET ${label} (10k), req per CPU-s`,
    ...SUBJECTS.map((s) => fmt(m.perCpuSecond[s.key])),
  ]);
  const startRows = Object.entries(result.startup).map(([size, t]) => [
    `start-up to first answer, ${Number(size).toLocaleString('en')} entities, ms / CPU ms / peak RSS MiB`,
    ...SUBJECTS.map((s) => `${t[s.key].ms.toFixed(0)} / ${t[s.key].cpuMs.toFixed(0)} / ${t[s.key].peakMb.toFixed(0)}`),
  ]);
  console.log(`load average ${result.load}`);
  console.log(table(['', ...names], [...readRows, ...cpuRows, ...startRows]));
}
