// Child processes for HTTP benches: every server under test runs in its own process and
// the load generator (autocannon) in another, so none of them share an event loop.
import { execFileSync, fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.mjs';

export const BENCH = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(BENCH, '..', 'packages', 'cli', 'dist', 'cli.js');

/**
 * Starts `node <script> ...args` and resolves once it prints `http://127.0.0.1:<port>`,
 * or, with `readyPath` (for servers that print nothing, such as json-server --quiet),
 * once GET `readyPath` on `port` answers. `execArgv`: node options for the server (e.g. --cpu-prof).
 */
export function startServer(name, script, args = [], { port, readyPath, execArgv = [] } = {}) {
  const file = path.isAbsolute(script) ? script : path.join(BENCH, script);
  const child = spawn(process.execPath, [...execArgv, file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], cwd: BENCH });
  let output = '';
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${name}: not listening within 20 s\n${output}`)), 20_000);
    const fail = (e) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    const ready = (p) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ name, url: `http://127.0.0.1:${p}`, pid: child.pid, child, stop: () => stop(child) });
    };
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      const m = readyPath ? null : /http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (m) ready(m[1]);
    });
    child.stderr.setEncoding('utf8').on('data', (c) => {
      output += c;
    });
    child.once('exit', (code) => fail(new Error(`${name} exited (${code}) before listening\n${output}`)));
    if (readyPath) {
      const poll = () =>
        request(`http://127.0.0.1:${port}`, readyPath)
          .then((r) => (r.status < 500 ? ready(port) : setTimeout(poll, 100)))
          .catch(() => !settled && setTimeout(poll, 100));
      poll();
    }
  });
}

/** A port that was free a moment ago (for servers that cannot report the one they got). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

/** The autocannon child process. */
export async function startLoadGenerator() {
  const child = fork(path.join(BENCH, 'lib', 'load.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], cwd: BENCH });
  await new Promise((resolve, reject) => {
    child.once('message', (m) => (m.ready ? resolve() : reject(new Error('load generator failed to start'))));
    child.once('exit', (code) => reject(new Error(`load generator exited (${code})`)));
  });
  let next = 0;
  const pending = new Map();
  child.on('message', (m) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error));
    else p.resolve(m.result);
  });
  return {
    /** One autocannon session: `{ url (origin), duration (s), requests: [{ method, path, headers?, body? }] }`. */
    run(options) {
      const id = ++next;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, options });
      });
    },
    stop: () => stop(child),
    pid: child.pid,
  };
}

/** One request with node:http; `path` is sent as written (a URL string would be re-encoded). */
export function request(origin, path, { method = 'GET', headers = {}, body } = {}) {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path, method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc; null where there is none. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return null;
  }
}
const TICKS = 100;

/**
 * Each load session of a pair: `warmup` seconds on every server first, then `rounds`
 * sessions of `duration` seconds each, alternating A B B A ... Returns the median
 * requests/s of each server, and the median requests per CPU-second of the server
 * process (which other load on the machine disturbs far less than requests/s).
 */
export async function measure(load, targets, { rounds, duration, warmup, connections = 10 }) {
  const names = Object.keys(targets);
  const run = async (name, seconds) => {
    const t = targets[name];
    // `path` goes on the wire as written (autocannon would percent-encode `>` in a URL).
    const req = { method: t.method ?? 'GET', path: t.path, headers: t.headers ?? {}, body: t.body };
    const cpu0 = t.pid ? cpuSeconds(t.pid) : null;
    const r = await load.run({ url: t.url, duration: seconds, connections, requests: [req] });
    const cpu1 = t.pid ? cpuSeconds(t.pid) : null;
    const bad = r.non2xx + r.errors + r.timeouts;
    if (bad > 0) throw new Error(`${name}: ${r.non2xx} non-2xx responses, ${r.errors} errors, ${r.timeouts} timeouts during the run`);
    return { ...r, perCpuSecond: cpu0 !== null && cpu1 !== null && cpu1 > cpu0 ? r.requests / (cpu1 - cpu0) : null };
  };
  for (const name of names) if (warmup > 0) await run(name, warmup);
  const figures = Object.fromEntries(names.map((n) => [n, []]));
  const perCpu = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 === 0 ? names : [...names].reverse()) {
      const r = await run(name, duration);
      figures[name].push(r.rps);
      if (r.perCpuSecond !== null) perCpu[name].push(r.perCpuSecond);
    }
  }
  const med = (xs) => (xs.length ? median(xs) : null);
  return {
    rps: Object.fromEntries(names.map((n) => [n, median(figures[n])])),
    perCpuSecond: Object.fromEntries(names.map((n) => [n, med(perCpu[n])])),
    rounds: figures,
    cpuRounds: perCpu,
  };
}

/** Starts the servers of `specs` (`[name, script, args]` each), runs `fn(servers)`, then stops them whatever happened. */
export async function withServers(specs, fn) {
  const servers = [];
  try {
    for (const s of specs) servers.push(await startServer(...s));
    return await fn(servers);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/**
 * Which CPUs a paired measure pins to: the load generator to the first, the servers to the
 * rest. Null (nothing pinned) with one CPU or without `taskset` (util-linux).
 */
export function pinning() {
  const cpus = os.availableParallelism?.() ?? os.cpus().length;
  if (cpus < 2) return null;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return null;
  }
  return { load: '0', servers: `1-${cpus - 1}`, all: `0-${cpus - 1}` };
}

/** Sets the CPUs of every thread of a running process (new threads inherit them). */
export function pin(pid, cpus) {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * The library's server against a baseline, as `pairs` independent pairs: each pair starts
 * both servers afresh (the order turning from pair to pair), warms them up, and measures
 * them in `rounds` alternating sessions. Where the machine allows, the load generator runs
 * on one CPU and the servers on the others, so the kernel does not sometimes put a server
 * on the load generator's CPU. The ratios are the medians of the pairs' own ratios: a
 * server process's speed varies from one start to the next by more than the gap being
 * measured (two bare servers of one build: 0.88x-1.23x of each other, docs/performance.md),
 * so one pair is one sample, and a ratio within a pair is taken under the same conditions.
 * `specs`: `{ [name]: [title, script, args] }`, the measured server first, its baseline
 * second; `ratio` and `cpuRatio` are the first's over the second's. `verify(servers)` runs on the first pair.
 */
export async function measurePairs(load, specs, reqPath, { pairs, rounds, duration, warmup, verify }) {
  const [a, b] = Object.keys(specs);
  const cpus = pinning();
  const perPair = [];
  let verified;
  try {
    if (cpus) pin(load.pid, cpus.load);
    for (let k = 0; k < pairs; k++) {
      const names = k % 2 === 0 ? [a, b] : [b, a];
      const m = await withServers(
        names.map((n) => specs[n]),
        async (servers) => {
          const started = Object.fromEntries(names.map((n, i) => [n, servers[i]]));
          if (cpus) for (const s of servers) pin(s.pid, cpus.servers);
          if (k === 0 && verify) verified = await verify([started[a], started[b]]);
          const targets = Object.fromEntries(names.map((n) => [n, { url: started[n].url, pid: started[n].pid, path: reqPath }]));
          return measure(load, targets, { rounds, duration, warmup });
        },
      );
      perPair.push(m);
    }
  } finally {
    if (cpus) pin(load.pid, cpus.all);
  }
  const pairRatio = (key) => {
    const xs = perPair.filter((m) => m[key][a] && m[key][b]).map((m) => m[key][a] / m[key][b]);
    return xs.length ? median(xs) : null;
  };
  return {
    verified,
    pinned: cpus !== null,
    ...mergeMeasures(perPair),
    pairs: perPair.map((m) => ({ rps: m.rps, perCpuSecond: m.perCpuSecond })),
    ratio: pairRatio('rps'),
    cpuRatio: pairRatio('perCpuSecond'),
  };
}

/** Several `measure` results of the same servers as one: every round of each in the medians. */
function mergeMeasures(parts) {
  const names = Object.keys(parts[0].rps);
  const all = (key, n) => parts.flatMap((p) => p[key][n]);
  const med = (xs) => (xs.length ? median(xs) : null);
  return {
    rps: Object.fromEntries(names.map((n) => [n, median(all('rounds', n))])),
    perCpuSecond: Object.fromEntries(names.map((n) => [n, med(all('cpuRounds', n))])),
    rounds: Object.fromEntries(names.map((n) => [n, all('rounds', n)])),
    cpuRounds: Object.fromEntries(names.map((n) => [n, all('cpuRounds', n)])),
  };
}
