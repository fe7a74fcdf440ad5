// The library's own JavaScript for an SQL key lookup, without a database: the SQL storage on
// a pg-shaped pool whose connection answers every statement at once (the one row of
// `/Person/Id=500000`), so the figure is the core's pipeline and the storage's plan, name,
// rows and response, and nothing of pg, the socket or PostgreSQL (issue 30).
//   pnpm run build && node bench/sql-key-nodb.mjs [--requests=200000] [--rounds=5] [--out=/tmp/nodb.cpuprofile]
// Prints CPU per request (process.cpuUsage) of each round after a warm-up of 20,000, with
// the load average (1 min); --out profiles the last round (node:inspector, every 50 µs).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { getLength, PERSON_SCHEMA } from './lib/postgres.mjs';
import { arg } from './lib/stats.mjs';

const REQUESTS = arg('requests', 200_000);
const ROUNDS = arg('rounds', 5);
const OUT = process.argv.find((a) => a.startsWith('--out='))?.slice(6);
const { createService } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const { createSqlStorage } = await import(new URL('../packages/sql/dist/index.js', import.meta.url));

/** pg's Query as the storage makes it (client.ts runNamed): text, values, then name and callback set. */
class Query {
  constructor(text, values) {
    this.text = text;
    this.values = values;
  }
}
const body = JSON.stringify({ Id: 500000, Name: 'Ann 5f1e0cf79d3c2bd0d1d8b67fa8ad6b06', Age: 0, City: 'City 0', Score: 39500000 });
const rowsOf = (text) => (text.startsWith('SELECT r.id') ? [{ id: '500000', version: '0', body }] : []);
const connection = {
  query(q, values) {
    if (q instanceof Query) queueMicrotask(() => q.callback(null, { rows: rowsOf(q.text) }));
    else return Promise.resolve({ rows: rowsOf(typeof q === 'string' ? q : q.text), values });
  },
  release() {},
  on() {},
  off() {},
};
const pool = {
  totalCount: 1,
  idleCount: 1,
  waitingCount: 0,
  options: {},
  Client: { Query },
  connect: () => Promise.resolve(connection),
  query: (text) => Promise.resolve({ rows: rowsOf(text) }),
  on() {},
};
// create: false: no DDL (the pool answers nothing to it); the indexes are declared as the SQL benches do.
const storage = createSqlStorage({ client: pool, table: 'person', create: false });
const service = createService();
service.addResource({ name: 'Person', storage, schema: PERSON_SCHEMA, indexes: ['Id', ['Age', 'Score'], 'City'] });
const uri = '/Person/Id=500000';
if ((await getLength(service, uri)) !== body.length + 2) throw new Error(`${uri} did not answer its one entity`);
for (let i = 0; i < 20_000; i++) await getLength(service, uri);
for (let round = 1; round <= ROUNDS; round++) {
  const session = OUT && round === ROUNDS ? new Session() : null;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
  }
  const c0 = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) await getLength(service, uri);
  const c = process.cpuUsage(c0);
  console.log(`round ${round}: ${((c.user + c.system) / REQUESTS).toFixed(2)} µs CPU per request, load ${loadavg()[0].toFixed(1)}`);
  if (session) writeFileSync(OUT, JSON.stringify((await session.post('Profiler.stop')).profile));
}
