// What a declared MemoryStorage index costs and gives (docs/storage.md#memory-indexes,
// docs/performance.md#two-order-keys-read-off-a-declared-index): for each size, the first
// sort (begun when the resource is added, done in slices while the scan answers requests),
// the longest pause of the event loop meanwhile, a page read off the index, and a POST that
// keeps the index up to date, against the same POST on a resource without the index.
// Not part of `pnpm bench` nor CI. Needs `pnpm run build`.
//   node bench/memory-order-index.mjs [--sizes=100000,1000000] [--posts=200]

import { loadavg } from 'node:os';
import { people } from './lib/data.mjs';
import { arg, median } from './lib/stats.mjs';

const { createService, MemoryStorage } = await import(new URL('../packages/core/dist/index.js', import.meta.url));
const SIZES = (process.argv.find((a) => a.startsWith('--sizes=')) ?? '--sizes=100000,1000000').slice(8).split(',').map(Number);
const POSTS = arg('posts', 200);
const load = () => loadavg()[0].toFixed(1);
const URI = '/Person/_/order_asc=Age,Name&limit=50';
const get = (service) => service.handle({ method: 'GET', uri: URI, headers: {} });
const post = (service, i) =>
  service.handle({
    method: 'POST',
    uri: '/Person',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ Age: i % 73, Name: `x${i}` }),
  });

/** The longest pause of the event loop while GETs come every 10 ms, until `done()`. */
async function pauses(done, service) {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const start = performance.now();
  while (!done()) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await get(service);
    if (performance.now() - start > 120_000) throw new Error('not done after 120 s');
  }
  clearInterval(timer);
  return longest;
}

/** Milliseconds of each of `count` calls of `fn`. */
async function each(count, fn) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  return times;
}

const lines = [`node ${process.version}`];
for (const n of SIZES) {
  let storage;
  const make = (indexes) => {
    const service = createService();
    // JSON-parsed, as the CLI's data file and every POSTed body reach a storage.
    storage = new MemoryStorage(JSON.parse(JSON.stringify(people(n))));
    service.addResource({ name: 'Person', storage, ...indexes });
    return service;
  };
  const plain = make({});
  const scan = median(await each(30, () => get(plain)));
  const t0 = performance.now();
  const indexed = make({ indexes: [['Age', 'Name']] });
  const added = performance.now() - t0;
  // Whether the sort is done: the index's own field, read here for the bench only.
  const index = storage.orders[0];
  const t1 = performance.now();
  await get(indexed);
  const first = performance.now() - t1;
  // Requests keep coming meanwhile, one every 10 ms (answered by the scan); the loop's
  // longest pause (a 1 ms timer's latest run) is then taken again on the resource without
  // the index for as long, the same requests coming: what the heap's collections alone cost.
  const longest = await pauses(() => index.sorted !== null, indexed);
  const sortedAfter = performance.now() - t0;
  const baseline = await pauses(() => performance.now() - t0 > 2 * sortedAfter, plain);
  const page = median(await each(50, () => get(indexed)));
  const withIndex = median(await each(POSTS, (i) => post(indexed, i)));
  const without = median(await each(POSTS, (i) => post(plain, i)));
  lines.push(
    `${n} entities: addResource ${added.toFixed(0)} ms (entities parsed included), first request ${first.toFixed(1)} ms (the scan answers it), sorted ~${(sortedAfter / 1000).toFixed(1)} s after addResource, longest loop pause meanwhile ${longest.toFixed(0)} ms (${baseline.toFixed(0)} ms without the index); ` +
      `page of 50: scan ${scan.toFixed(3)} ms, off the index ${page.toFixed(3)} ms; POST median ${withIndex.toFixed(2)} ms with the index, ${without.toFixed(2)} ms without; load ${load()}`,
  );
  console.error(lines.at(-1));
}
console.log(lines.join('\n'));
