// The service's bounded caches (parsed URIs, compiled scans, row rules, macro rewrites,
// Accept negotiation, search patterns) on lru-cache 11, against the hand-written "clock"
// cache it replaced (kept here only as the baseline), on three access patterns of 2,000
// entries: every request a hit (one client repeating a few URIs), 27% misses (a Zipf-like
// mix of 4,000 URIs), and a cycle through 3,000 distinct URIs (the worst case: every access
// a miss). Figures: median ns per access of 7 rounds, load printed.
//   node bench/lru.mjs [--json]
import os from 'node:os';
import { LRUCache } from 'lru-cache';
import { flags, fmt, median, table } from './lib/stats.mjs';

const opts = flags();

/** The cache packages/core/src/util/lru.ts held until lru-cache replaced it. */
class Clock {
  map = new Map();
  constructor(max) {
    this.max = max;
  }
  get(key) {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }
  set(key, value) {
    const entry = this.map.get(key);
    if (entry !== undefined) {
      entry.value = value;
      entry.used = true;
      return;
    }
    this.map.set(key, { value, used: false });
    if (this.map.size > this.max) this.evict();
  }
  evict() {
    for (const [key, entry] of this.map) {
      this.map.delete(key);
      if (!entry.used) return;
      entry.used = false;
      this.map.set(key, entry);
    }
  }
}

const SIZE = 2000;
const N = 400_000;
const uris = (count) => Array.from({ length: count }, (_, i) => `/Person/Age>${i}&Name!=null/order_asc=Name&limit=10`);
function zipf(count) {
  const keys = uris(count);
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: N }, () => keys[Math.floor(count * random() ** 3)]);
}
const patterns = {
  'hits only (20 URIs)': Array.from({ length: N }, (_, i) => uris(20)[i % 20]),
  'mixed (4,000 URIs, Zipf-like)': zipf(4000),
  'cycle of 3,000 URIs (all misses)': Array.from({ length: N }, (_, i) => uris(3000)[i % 3000]),
};

function run(make, keys) {
  const cache = make();
  let misses = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (cache.get(key) === undefined) {
      misses++;
      cache.set(key, i);
    }
  }
  return { ns: Number(process.hrtime.bigint() - start) / keys.length, misses: misses / keys.length };
}

const makers = { 'lru-cache 11': () => new LRUCache({ max: SIZE }), 'hand-written clock': () => new Clock(SIZE) };
const rows = [];
for (const [pattern, keys] of Object.entries(patterns)) {
  const times = { 'lru-cache 11': [], 'hand-written clock': [] };
  let missRate = 0;
  for (let round = 0; round < 7; round++)
    for (const [name, make] of Object.entries(makers)) {
      const r = run(make, keys);
      times[name].push(r.ns);
      missRate = r.misses;
    }
  const lib = median(times['lru-cache 11']);
  const own = median(times['hand-written clock']);
  rows.push({
    pattern,
    misses: `${(missRate * 100).toFixed(0)}%`,
    'lru-cache ns': fmt(lib),
    'clock ns': fmt(own),
    'lru-cache / clock': fmt(lib / own),
  });
}
if (opts.json) console.log(JSON.stringify({ load: os.loadavg()[0], rows }));
else {
  console.log(`load ${os.loadavg()[0].toFixed(1)}`);
  console.log(
    table(
      Object.keys(rows[0]),
      rows.map((r) => Object.values(r)),
    ),
  );
}
