// The generated scans of the first page of one and of two order keys (issue 27), timed
// directly, without the request around them: docs/performance.md, "Two order keys: where the
// entities come from". The scans' source is taken as the core generates it (a Proxy on
// `Function` sees it), each side is built again from its source in this process, and every
// round times each side once, in a random order, each call right after a one-key scan of the
// same entities (as the bench's interleaved requests run them).
//
//   pnpm run build && node bench/order-scans.mjs [--data=json|js] [--rounds=400] [--rank]
//     [--print] [--src=file.js ...]
//
// --rank gives every entity a number `NameRank` (its Name's place among all names, an own
// property like the others) and adds a side that orders by it instead of Name: the same page
// with numbers where the strings were, which tells the strings' cost from the scan's own.
// --print writes the two-key scan's source; --src=file adds a side built from such a file (a
// variant of the scan), checked to give the same page. Times are wall ms per call, with the
// load average: run it on a quiet machine.

import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { people } from './lib/data.mjs';
import { arg, median } from './lib/stats.mjs';

const captured = [];
const RealFunction = globalThis.Function;
globalThis.Function = new Proxy(RealFunction, {
  construct(target, args) {
    const make = Reflect.construct(target, args);
    if (args[0] !== 'cmpS') return make;
    const scan = { source: args.at(-1), helpers: null };
    captured.push(scan);
    return (...helpers) => {
      scan.helpers = helpers;
      return make(...helpers);
    };
  },
});
const { createService, MemoryStorage } = await import(new URL('../packages/core/dist/index.js', import.meta.url));

const option = (name, fallback) => (process.argv.find((a) => a.startsWith(`--${name}=`)) ?? `--${name}=${fallback}`).split('=')[1];
const data = option('data', 'json');
const ROUNDS = arg('rounds', 400);
const rank = process.argv.includes('--rank');

let base = people(100_000);
if (rank) {
  const names = [...new Set(base.map((e) => e.Name))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const place = new Map(names.map((n, i) => [n, i]));
  // One literal, one hidden class (a spread copy of each entity gives the scan many).
  base = base.map(({ id, Name, Age, Email, City, Active }) => ({ id, Name, Age, Email, City, Active, NameRank: place.get(Name) }));
}
const list = data === 'json' ? JSON.parse(JSON.stringify(base)) : base;
const service = createService();
service.addResource({ name: 'Person', storage: new MemoryStorage(list) });
const uris = ['/Person/_/order_asc=Age&limit=50', '/Person/_/order_asc=Age,Name&limit=50'];
// The third call of a query generates its scan.
for (const uri of uris) for (let i = 0; i < 4; i++) await service.handle({ method: 'GET', uri, headers: {} });
const [one, two] = captured;
if (two === undefined) throw new Error('no generated scans seen: is packages/core/dist built?');
if (process.argv.includes('--print')) {
  console.log(two.source);
  process.exit(0);
}

// Neither query has conditions, and every entity has Age and Name: P, L, T and S are not read.
const build = (source, helpers) => new RealFunction('cmpS', 'cmpK', 'insert', source)(...helpers);
const sides = [
  ['one key', build(one.source, one.helpers)],
  ['two keys', build(two.source, two.helpers)],
];
if (rank) sides.push(['two keys, NameRank for Name', build(two.source.replaceAll('x.Name', 'x.NameRank'), two.helpers)]);
for (const file of process.argv.filter((a) => a.startsWith('--src=')).map((a) => a.slice(6)))
  sides.push([file, build(readFileSync(file, 'utf8'), two.helpers)]);
const run = (scan) => scan(list, 50, 0, [], [], [], null);

const expected = run(sides[1][1]);
for (const [name, scan] of sides.slice(2)) {
  const page = run(scan);
  if (page.length !== expected.length || page.some((e, i) => e !== expected[i])) throw new Error(`${name}: not the two-key page`);
}
for (let i = 0; i < 50; i++) for (const [, scan] of sides) run(scan);
const times = sides.map(() => []);
const first = sides[0][1];
for (let r = 0; r < ROUNDS; r++) {
  const order = [...sides.keys()];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (const j of order) {
    run(first);
    const t0 = process.hrtime.bigint();
    run(sides[j][1]);
    times[j].push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}
const base1 = median(times[0]);
const fastest1 = Math.min(...times[0]);
for (const [j, [name]] of sides.entries()) {
  const m = median(times[j]);
  const f = Math.min(...times[j]);
  console.log(
    `entities from ${data === 'json' ? 'JSON text' : 'JavaScript'}, ${name}: median ${m.toFixed(3)} ms (${(m / base1).toFixed(2)}x), fastest ${f.toFixed(3)} ms (${(f / fastest1).toFixed(2)}x)`,
  );
}
console.log(`${ROUNDS} rounds, load ${loadavg()[0].toFixed(1)}`);
