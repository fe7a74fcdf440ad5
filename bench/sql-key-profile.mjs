// Where the SQL storage's key lookup spends Node's CPU: `--cpu-prof` over a run of key
// lookups through `service.handle`, beside the same through `pg` by hand (issue 30).
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/sql-key-profile.mjs [--rows=100000] [--requests=20000] [--uri=in]
// Prints this process's CPU per request (process.cpuUsage, which leaves out PostgreSQL's
// work) and wall time per request of each side, with the load average (1 min).
import { loadavg } from 'node:os';
import { getLength, loadPeople, PERSON_SCHEMA, startPostgres } from './lib/postgres.mjs';
import { arg } from './lib/stats.mjs';

const ROWS = arg('rows', 100_000);
const REQUESTS = arg('requests', 20_000);
const inList = process.argv.includes('--uri=in');
const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));
const { pool, stop } = await startPostgres({ max: 4 });
try {
  const storage = createSqlStorage({ client: pool, table: 'person' });
  const service = createService();
  service.addResource({ name: 'Person', storage, schema: PERSON_SCHEMA, indexes: ['Id', ['Age', 'Score'], 'City'] });
  await storage.ready();
  await loadPeople(pool, 'person', ROWS);
  await pool.query('ANALYZE person');
  const keyOf = (i) => 1 + ((i * 7919) % ROWS);
  const keys100 = (i) => Array.from({ length: 100 }, (_, j) => 1 + ((i * 104729 + j * 9973) % ROWS));
  const n = inList ? Math.ceil(REQUESTS / 20) : REQUESTS;
  const sides = {
    hand: inList
      ? async (i) =>
          (await pool.query(`SELECT body FROM person WHERE doc -> 'Id' = ANY($1::jsonb[])`, [keys100(i).map(String)])).rows.length
      : async (i) => (await pool.query(`SELECT body FROM person WHERE doc -> 'Id' = $1::jsonb`, [String(keyOf(i))])).rows.length,
    library: (i) => getLength(service, inList ? `/Person/Id=${keys100(i).join('|')}` : `/Person/Id=${keyOf(i)}`),
  };
  let i = 0;
  for (let round = 0; round < 3; round++)
    for (const [name, run] of Object.entries(sides)) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let j = 0; j < n; j++) await run(i++);
      const c = process.cpuUsage(c0);
      const wall = (performance.now() - t0) / n;
      console.log(
        `${name}: ${((c.user + c.system) / 1000 / n).toFixed(3)} ms CPU, ${wall.toFixed(3)} ms wall per request, load ${loadavg()[0].toFixed(1)}`,
      );
    }
} finally {
  await stop();
}
