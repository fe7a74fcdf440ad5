// GET and REPORT through service.handle over 100k entities: a resource on the SQL
// storage (PGlite in memory, conditions/order/paging pushed down to SQL) against the same
// resource on MemoryStorage. Needs `pnpm build` (imports packages/sql/dist).
//   node bench/sql.mjs [--quick] [--json]
import { createService, MemoryStorage } from '@resourcery/core';
import { createSqlStorage, openPglite } from '../packages/sql/dist/index.js';
import { people } from './lib/data.mjs';
import { flags, fmt, median, table } from './lib/stats.mjs';

const COUNT = 100_000;
const RAW = { accept: 'application/json;raw=true' };

const data = people(COUNT);
const REQUESTS = [
  ['GET', '/Person/Age>30&Name!=null/order_desc=Age&limit=50&select=Name,Age'],
  ['GET', '/Person/City=Boston&Active=true/limit=20'],
  ['GET', `/Person/Email=${encodeURIComponent(data[77_777].Email ?? data[77_778].Email)}`],
  ['GET', '/Person/city=Boston/limit=20'],
  ['GET', '/Person/Age>30/offset=50000&limit=10'],
  ['REPORT', '/Person/Age>=60&Active=true'],
];

async function serviceOn(storage) {
  const service = createService();
  service.addResource({ name: 'Person', storage });
  return service;
}

async function timeRequest(service, method, uri, rounds) {
  const times = [];
  let body;
  for (let i = 0; i < rounds + 2; i++) {
    const start = process.hrtime.bigint();
    const res = await service.handle({ method, uri, headers: RAW });
    body = res.body;
    if (i >= 2) times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { ms: median(times), body };
}

export async function run({ quick = false } = {}) {
  const rounds = quick ? 5 : 15;
  const memory = await serviceOn(new MemoryStorage(data));
  const db = await openPglite();
  const storage = createSqlStorage({ client: db, table: 'person' });
  const loadStart = Date.now();
  for (let i = 0; i < COUNT; i += 10_000) await storage.write({ insert: data.slice(i, i + 10_000) });
  const loadMs = Date.now() - loadStart;
  const sql = await serviceOn(storage);

  const results = [];
  for (const [method, uri] of REQUESTS) {
    const m = await timeRequest(memory, method, uri, rounds);
    const s = await timeRequest(sql, method, uri, rounds);
    if (m.body !== s.body) throw new Error(`sql bench: ${method} ${uri} answers differently on SQL and in memory`);
    results.push({ method, uri, memoryMs: m.ms, sqlMs: s.ms, ratio: m.ms / s.ms });
  }
  await db.close();
  return { entities: COUNT, rounds, loadMs, results };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    console.log(
      `${r.entities.toLocaleString('en-US')} entities; loading them into PGlite took ${fmt(r.loadMs / 1000)} s; median of ${r.rounds} requests`,
    );
    console.log(
      table(
        ['request', 'memory ms', 'SQL (PGlite) ms', 'SQL speed vs memory'],
        r.results.map((x) => [
          `${x.method} ${x.uri.length > 70 ? `${x.uri.slice(0, 67)}...` : x.uri}`,
          fmt(x.memoryMs),
          fmt(x.sqlMs),
          `${x.ratio.toFixed(2)}x`,
        ]),
      ),
    );
  }
}
