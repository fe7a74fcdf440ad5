// HTTP benches. Every server runs in its own child process, autocannon in another; each
// pair is checked for equivalent output first, then measured side by side in rounds.
//   node bench/http.mjs [--quick] [--json] [--only=node,nodesmall,express,koa,control,jsonserver,post]
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { RESULTS_DIR, writeDataFile } from './lib/data.mjs';
import { BENCH, CLI, freePort, measure, measurePairs, request, startLoadGenerator, withServers } from './lib/http.mjs';
import { flags, fmt, median, table } from './lib/stats.mjs';

const JSON_SERVER = path.join(BENCH, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');

export const NODE_PATH = '/Person/Age>30&Email!=null/order_desc=Age&limit=10&select=Name,Age';
/** The closest json-server 0.17 comes to NODE_PATH: same filter, order and page, but no select. */
const JSON_SERVER_PATH = '/Person?Age_gte=31&Email_ne=null&_sort=Age&_order=desc&_limit=10';
const RESOURCERY_PATH = '/Person/Age>30&Email!=null/order_desc=Age&limit=10';
const POST_BODY = JSON.stringify({ Name: 'Bench Person', Age: 33, Email: 'bench@example.org', City: 'Stockholm', Active: true });

function settings(quick) {
  // Many short rounds: other load on the machine comes in bursts, and a median of many
  // rounds shrugs off a burst that would spoil one long run.
  return quick ? { rounds: 3, duration: 1, warmup: 1 } : { rounds: 6, duration: 1.2, warmup: 1.5 };
}

/** The envelope's TimeElapsedMs is measured per request, so it is the one field that may differ. */
function normalise(body) {
  return body.toString('utf8').replace(/"TimeElapsedMs":[-+0-9.eE]+/g, '"TimeElapsedMs":0');
}

/**
 * Header names and values, except those that vary per response (Date, and Content-Length
 * with TimeElapsedMs); an ETag's value is each server's own (servers/small.mjs), so only its
 * presence counts.
 */
function stableHeaders(headers) {
  return JSON.stringify(
    Object.entries(headers)
      .filter(([k]) => k !== 'date' && k !== 'content-length')
      .map(([k, v]) => (k === 'etag' ? [k, 'present'] : [k, v]))
      .sort(),
  );
}

/** Same status, headers and body (TimeElapsedMs normalised) from every server. */
async function verifyIdentical(servers, reqPath, options = {}) {
  const answers = await Promise.all(servers.map((s) => request(s.url, reqPath, options)));
  const [first, ...rest] = answers;
  if (first.status !== 200) throw new Error(`${servers[0].name}: ${reqPath} answered ${first.status}: ${first.body}`);
  rest.forEach((a, i) => {
    const name = servers[i + 1].name;
    if (a.status !== first.status) throw new Error(`${name} answered ${a.status}, ${servers[0].name} ${first.status}`);
    if (stableHeaders(a.headers) !== stableHeaders(first.headers))
      throw new Error(`${name}: headers ${stableHeaders(a.headers)} differ from ${servers[0].name}'s ${stableHeaders(first.headers)}`);
    if (normalise(a.body) !== normalise(first.body))
      throw new Error(`${name}: body differs from ${servers[0].name}\n${a.body}\n${first.body}`);
  });
  return normalise(first.body);
}

function target(server, reqPath, extra = {}) {
  return { url: server.url, pid: server.pid, path: reqPath, ...extra };
}

function cpuRatio(m, baseline) {
  const a = m.perCpuSecond.lib;
  const b = m.perCpuSecond[baseline];
  return a && b ? a / b : null;
}

/** requests/s ratio (the target) and requests-per-server-CPU-second ratio (a check against noise). */
function ratios(m, baseline) {
  return { ratio: m.rps.lib / m.rps[baseline], cpuRatio: cpuRatio(m, baseline) };
}

/**
 * The library's server and a bare one on the same small GET, as independent pairs of fresh
 * servers (`measurePairs`: start order turning, load generator and servers on CPUs of
 * their own where the machine allows). One start of a pair of servers was a sample of one:
 * the server started first spent 10-30 % more CPU a request whatever it ran, and two
 * starts of one build differed by as much as the gap measured (docs/performance.md,
 * "Small GET: the start order", "Small GET: pairs of fresh servers").
 */
async function libAndBare(load, [lib, bare], reqPath, quick) {
  const { verified, ...m } = await measurePairs(load, { lib, bare }, reqPath, {
    ...pairSettings(quick),
    verify: (servers) => verifyIdentical(servers, reqPath),
  });
  return { sample: verified, ...m };
}

/** Pairs of fresh servers, each warmed up and measured in two rounds a server. */
function pairSettings(quick) {
  return quick ? { pairs: 3, rounds: 2, duration: 1, warmup: 1 } : { pairs: 8, rounds: 2, duration: 1, warmup: 1 };
}

/**
 * Bare node:http against itself, measured as the small-GET suites are: how far apart two
 * servers of one build come out, the noise floor of the ratios beside it.
 */
async function control(load, quick) {
  const data = writeDataFile('people-50.json', 50);
  const bare = ['bare node:http', 'servers/node-small.mjs', [data, 'bare']];
  return libAndBare(load, [['bare node:http (as "lib")', ...bare.slice(1)], bare], '/Person/id=7', quick);
}

/** GET over 10k entities: the node adapter against bare node:http (naive and hand-tuned). */
async function nodeAdapter(load, quick) {
  const data = writeDataFile('people-10k.json', 10_000);
  return withServers(
    [
      ['resourcery (node adapter)', 'servers/node-adapter.mjs', [data]],
      ['bare node:http', 'servers/node-bare.mjs', [data]],
      ['bare node:http, top-k', 'servers/node-bare.mjs', [data, '--top-k']],
    ],
    async ([lib, bare, best]) => {
      const sample = await verifyIdentical([lib, bare, best], NODE_PATH);
      const targets = { lib: target(lib, NODE_PATH), bare: target(bare, NODE_PATH), best: target(best, NODE_PATH) };
      const m = await measure(load, targets, settings(quick));
      return { sample, ...m, ...ratios(m, 'bare'), ratioBest: m.rps.lib / m.rps.best, cpuRatioBest: cpuRatio(m, 'best') };
    },
  );
}

/** The CLI and json-server 0.17, each on its own fresh copy of `data` (`<name>-resourcery.json`, `<name>-json-server.json`). */
async function cliAndJsonServer(data, name) {
  const mine = path.join(RESULTS_DIR, `${name}-resourcery.json`);
  const theirs = path.join(RESULTS_DIR, `${name}-json-server.json`);
  copyFileSync(data, mine);
  copyFileSync(data, theirs);
  const port = await freePort();
  return [
    ['resourcery (CLI)', CLI, ['serve', mine, '--port', '0']],
    [
      'json-server 0.17',
      JSON_SERVER,
      [theirs, '--port', String(port), '--host', '127.0.0.1', '--quiet'],
      { port, readyPath: '/Person?_limit=1' },
    ],
  ];
}

/** The CLI against json-server 0.17 serving copies of the same file, equivalent query. */
async function jsonServer(load, quick) {
  const data = writeDataFile('people-10k.json', 10_000);
  return withServers(await cliAndJsonServer(data, 'get'), async ([lib, js]) => {
    const a = await request(lib.url, RESOURCERY_PATH);
    const b = await request(js.url, JSON_SERVER_PATH);
    const ours = JSON.parse(a.body).Data;
    const theirsData = JSON.parse(b.body);
    if (JSON.stringify(ours) !== JSON.stringify(theirsData))
      throw new Error(`json-server selects other entities than resourcery:\n${b.body}\n${a.body}`);
    const targets = { lib: target(lib, RESOURCERY_PATH), js: target(js, JSON_SERVER_PATH) };
    const m = await measure(load, targets, settings(quick));
    return { ...m, ...ratios(m, 'js'), bytes: { resourcery: a.body.length, jsonServer: b.body.length } };
  });
}

/**
 * POST of one entity per request with write-back: the CLI (its journal appended and
 * fsynced before acknowledging, group commit) against json-server (which rewrites its file
 * after answering). Fresh copies of the file and fresh servers every round, so the file
 * size does not drift with the number of writes.
 */
async function posts(load, quick) {
  const data = writeDataFile('people-10k.json', 10_000);
  const { duration } = settings(quick);
  const rounds = quick ? 3 : 4;
  const figures = { lib: [], js: [] };
  const perCpu = { lib: [], js: [] };
  const headers = { 'content-type': 'application/json' };
  for (let r = 0; r < rounds; r++) {
    await withServers(await cliAndJsonServer(data, 'post'), async ([lib, js]) => {
      for (const s of [lib, js]) {
        const res = await request(s.url, '/Person', { method: 'POST', headers, body: POST_BODY });
        if (res.status !== 201) throw new Error(`${s.name}: POST answered ${res.status}: ${res.body}`);
      }
      const post = { method: 'POST', headers, body: POST_BODY };
      const targets = { lib: target(lib, '/Person', post), js: target(js, '/Person', post) };
      const m = await measure(load, r % 2 ? { js: targets.js, lib: targets.lib } : targets, { rounds: 1, duration, warmup: 0.5 });
      for (const k of ['lib', 'js']) {
        figures[k].push(m.rps[k]);
        if (m.perCpuSecond[k]) perCpu[k].push(m.perCpuSecond[k]);
      }
    });
  }
  const rps = { lib: median(figures.lib), js: median(figures.js) };
  const perCpuSecond = { lib: perCpu.lib.length ? median(perCpu.lib) : null, js: perCpu.js.length ? median(perCpu.js) : null };
  return { rps, perCpuSecond, rounds: figures, ...ratios({ rps, perCpuSecond }, 'js') };
}

/** The small GET of the framework benches through the node adapter: the adapter's own cost, with the least around it. */
async function nodeSmall(load, quick) {
  const data = writeDataFile('people-50.json', 50);
  const reqPath = '/Person/id=7';
  return libAndBare(
    load,
    [
      ['resourcery (node adapter)', 'servers/node-small.mjs', [data, 'adapter']],
      ['bare node:http', 'servers/node-small.mjs', [data, 'bare']],
    ],
    reqPath,
    quick,
  );
}

/**
 * A small GET (one entity of 50) through a framework adapter against a bare handler of
 * the same framework producing the same bytes. Skipped while the adapter is a stub.
 */
function frameworkSuite(framework) {
  return async (load, quick) => {
    const adapter = await import(`@resourcery/${framework}`);
    const factory = framework === 'express' ? 'createExpressMiddleware' : 'createKoaMiddleware';
    if (typeof adapter[factory] !== 'function')
      return { skipped: `@resourcery/${framework} does not export ${factory} yet (the adapter is a stub)` };
    const data = writeDataFile('people-50.json', 50);
    const reqPath = '/api/Person/id=7';
    return libAndBare(
      load,
      [
        [`resourcery (${framework} adapter)`, `servers/${framework}.mjs`, [data, 'adapter']],
        [`bare ${framework}`, `servers/${framework}.mjs`, [data, 'bare']],
      ],
      reqPath,
      quick,
    );
  };
}

export const SUITES = {
  node: nodeAdapter,
  nodesmall: nodeSmall,
  express: frameworkSuite('express'),
  koa: frameworkSuite('koa'),
  control,
  jsonserver: jsonServer,
  post: posts,
};

export async function run({ quick = false, only = null, log = () => {} } = {}) {
  const load = await startLoadGenerator();
  const out = {};
  try {
    for (const [name, suite] of Object.entries(SUITES)) {
      if (only && !only.includes(name)) continue;
      log(`http: ${name}...`);
      try {
        out[name] = await suite(load, quick);
      } catch (error) {
        out[name] = { error: error.message };
      }
    }
  } finally {
    await load.stop();
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run({ ...opts, log: (m) => process.stderr.write(`${m}\n`) });
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    const rows = [];
    for (const [name, x] of Object.entries(r)) {
      if (x.error || x.skipped) rows.push([name, x.error ? 'error' : 'skipped', (x.error ?? x.skipped).split('\n')[0]]);
      else
        rows.push([
          name,
          Object.entries(x.rps)
            .map(([k, v]) => `${k} ${fmt(v)}/s`)
            .join(', '),
          `${x.ratio.toFixed(2)}x`,
          x.cpuRatio ? `${x.cpuRatio.toFixed(2)}x` : '-',
        ]);
    }
    console.log(table(['suite', 'requests/s (median)', 'ratio', 'per CPU-s'], rows));
    console.log(JSON.stringify(r, null, 1));
  }
}
