// The service's own work for an IN list of 100 keys (`/Person/Id=k1|k2|...|k100`), a new URI
// each call, as the IN list row of issue 27 sends them (docs/performance.md, "The parse of an
// IN list"): every call misses the parse cache. Two rows, in process CPU time per call (µs,
// the median of --rounds rounds of --calls calls each, with the 10th-90th percentiles), with
// the load average beside them:
// - parseUri of the URI;
// - a GET of it through service.handle with the Person schema of the SQL benches (Id an
//   integer) on a storage that, as the SQL storage does, applies the conditions and the paging
//   itself, here finding nothing at once: the parse, the typing and compiling of the
//   conditions and the pipeline around them, without a storage's work (the answer is a 204).
// With --before=DIR (a second build's dist folder, e.g. a copy of packages/core/dist taken
// before a change, beside a node_modules link to packages/core/node_modules) both builds are
// timed in turns, round by round, in one process, so a burst of load falls on both.
//   node bench/parse-in-list.mjs [--rounds=41] [--calls=200] [--keys=100] [--before=DIR]
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { arg, median, quantile } from './lib/stats.mjs';

const ROUNDS = arg('rounds', 41);
const CALLS = arg('calls', 200);
const KEYS = arg('keys', 100);
const beforePath = process.argv.find((a) => a.startsWith('--before='))?.slice(9);

/** parseUri and a service with an empty Person resource, of one build. */
async function build(storageModule, indexModule) {
  const { parseUri } = await storageModule;
  const { createService } = await indexModule;
  const service = createService();
  service.addResource({
    name: 'Person',
    storage: { select: async () => ({ entities: [], conditionsApplied: true, pagingApplied: true }), write: async () => {} },
    schema: { type: 'object', properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: 'integer' } } },
  });
  return { parseUri, service };
}
const builds = [['this build', await build(import('@resourcery/core/storage'), import('@resourcery/core'))]];
if (beforePath) {
  const at = (file) => import(pathToFileURL(join(beforePath, file)).href);
  builds.unshift(['before', await build(at('storage.js'), at('index.js'))]);
}

// Keys of a 1M-row table, as queries-or-order.mjs picks them: a new set each call (its first key
// differs from every other call's), so no two calls (of either build) parse the same text.
let seed = 0;
function uri() {
  seed++;
  const keys = [];
  for (let i = 0; i < KEYS; i++) keys.push(1 + ((seed * 104729 + i * 9973) % 1_000_000));
  return `/Person/Id=${keys.join('|')}`;
}

/** CPU µs per call of `one` over CALLS new URIs (made before the clock starts). */
async function round(one) {
  const uris = Array.from({ length: CALLS }, uri);
  const start = process.cpuUsage();
  for (const u of uris) await one(u);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const check = builds.map(([, b]) => JSON.stringify(b.parseUri(`/Person/Id=1|2|'x'|%41/limit=5`)));
if (new Set(check).size !== 1) throw new Error(`the builds parse differently: ${check.join(' / ')}`);
const rows = {
  parseUri: (b) => (u) => {
    if (b.parseUri(u).conditions.length !== 1) throw new Error(`${u}: not one condition item`);
  },
  'GET through service.handle, storage answers nothing': (b) => async (u) => {
    const res = await b.service.handle({ method: 'GET', uri: u, headers: { accept: 'application/json;raw=true' } });
    if (res.status !== 204) throw new Error(`${u}: ${res.status} ${String(res.body).slice(0, 200)}`);
  },
};
console.log(`node ${process.version}, ${KEYS} keys, ${ROUNDS} rounds of ${CALLS} new URIs (${uri().length} characters), load ${load()}`);
for (const [row, of] of Object.entries(rows)) {
  const fns = builds.map(([, b]) => of(b));
  // Warm-up: the code optimised, the collector at its pace.
  for (let i = 0; i < 5; i++) for (const fn of fns) await round(fn);
  const times = builds.map(() => []);
  for (let r = 0; r < ROUNDS; r++) for (const [j, fn] of fns.entries()) times[j].push(await round(fn));
  const medians = times.map(median);
  for (const [j, [name]] of builds.entries()) {
    const t = times[j];
    console.log(
      `${row}, ${name}: ${medians[j].toFixed(1)} µs CPU per call (p10-p90 ${quantile(t, 0.1).toFixed(1)}-${quantile(t, 0.9).toFixed(1)})`,
    );
  }
  if (builds.length === 2) console.log(`${row}, this build / before: ${(medians[1] / medians[0]).toFixed(2)}x`);
  console.log(`load ${load()}`);
}
