// The library's default storage (MemoryStorage) by key: a GET of one entity by its key, a
// POST with its key and a POST that generates it, at 1k, 100k and 1M entities, through
// service.handle (no HTTP). The goal: flat from 1k to 1M (docs/performance.md).
//   node bench/memory-keys.mjs [--json] [--quick] [--reps=N]
// Each figure is the median of 5 rounds of N calls (20N for the GET), in milliseconds per call; the machine's
// load is printed beside them.
import os from 'node:os';
import { createService, MemoryStorage } from '@resourcery/core';
import { arg, flags, fmt, median, table } from './lib/stats.mjs';

const opts = flags();
const reps = arg('reps', opts.quick ? 50 : 200);
const sizes = opts.quick ? [1_000, 100_000] : [1_000, 100_000, 1_000_000];
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json;raw=true' };

function serviceOf(n) {
  const entities = new Array(n);
  for (let i = 0; i < n; i++) entities[i] = { Id: i + 1, Name: `person ${i + 1}`, Age: i % 90 };
  const service = createService();
  service.addResource({ name: 'Person', key: 'Id', storage: new MemoryStorage(entities) });
  return service;
}

/** Median ms per call of 5 rounds of `count` calls (a lookup is cheap: its rounds are longer, so the scheduler's pauses on a loaded machine do not dominate them). */
async function timed(fn, count = reps) {
  const rounds = [];
  for (let r = 0; r < 5; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) await fn(i);
    rounds.push(Number(process.hrtime.bigint() - start) / 1e6 / count);
  }
  return median(rounds);
}

async function check(response, status) {
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${response.body}`);
}

const rows = [];
for (const n of sizes) {
  const service = serviceOf(n);
  // Warm-up, which also builds the index (the first lookup of a property reads every entity once).
  for (let i = 0; i < 50; i++) await check(await service.handle({ method: 'GET', uri: `/Person/${1 + ((i * 7919) % n)}` }), 200);
  let next = n + 1_000_000;
  const lookup = await timed(
    async (i) => check(await service.handle({ method: 'GET', uri: `/Person/${1 + ((i * 7919) % n)}` }), 200),
    reps * 20,
  );
  const keyed = await timed(async () =>
    check(await service.handle({ method: 'POST', uri: '/Person', headers: JSON_HEADERS, body: `{"Id":${next++},"Name":"new"}` }), 201),
  );
  const generated = await timed(async () =>
    check(await service.handle({ method: 'POST', uri: '/Person', headers: JSON_HEADERS, body: '{"Name":"new"}' }), 201),
  );
  rows.push({ entities: n, lookup, keyed, generated });
}

const load = os.loadavg()[0].toFixed(2);
if (opts.json) console.log(JSON.stringify({ load, reps, rows }));
else {
  console.log(`MemoryStorage by key, ms per call (median of 5 rounds of ${reps}; load ${load}):`);
  console.log(
    table(
      ['entities', 'GET /Person/<key>', 'POST with key', 'POST generating the key'],
      rows.map((r) => [r.entities.toLocaleString('en'), fmt(r.lookup, 3), fmt(r.keyed, 3), fmt(r.generated, 3)]),
    ),
  );
}
