// Query evaluation over 100k entities: the library's parse + compile + evaluate, as the
// pipeline runs it, against hand-written filter/sort/slice/map in the same process.
// Also: the time to parse a URI on a cache miss and on a hit.
//   node bench/query.mjs [--quick] [--json]
import { compileQuery, evaluate, parseUri, toMetaConditions } from '@resourcery/core/storage';
import { clearParseCache } from '@resourcery/core/internal';
import { people } from './lib/data.mjs';
import { alternate, flags, fmt, median, table, timeLoop } from './lib/stats.mjs';

const URI = '/Person/Age>30&Name!=null/order_desc=Age&limit=50&select=Name,Age';
const COUNT = 100_000;

/** What the pipeline does per request: cached parse, then the query compiled once per parse. */
function libraryQuery(data) {
  const compiled = new WeakMap();
  return () => {
    const parsed = parseUri(URI);
    let q = compiled.get(parsed);
    if (q === undefined) {
      q = compileQuery(parsed.conditions, toMetaConditions(parsed.meta));
      compiled.set(parsed, q);
    }
    return evaluate(data, q);
  };
}

/** The same query, nothing cached: parse (miss), compile, evaluate. */
function libraryUncached(data) {
  return () => {
    clearParseCache();
    const parsed = parseUri(URI);
    return evaluate(data, compileQuery(parsed.conditions, toMetaConditions(parsed.meta)));
  };
}

/** What a developer writes by hand for the same request. */
function handWritten(data) {
  return () =>
    data
      .filter((e) => e.Age > 30 && e.Name != null)
      .sort((a, b) => b.Age - a.Age)
      .slice(0, 50)
      .map((e) => ({ Name: e.Name, Age: e.Age }));
}

/** Hand-tuned: one pass keeping the best 50 (ties keep data order), no full sort. */
function handTopK(data) {
  return () => {
    const top = [];
    for (let i = 0; i < data.length; i++) {
      const e = data[i];
      if (!(e.Age > 30 && e.Name != null)) continue;
      if (top.length === 50 && e.Age <= top[49].Age) continue;
      let j = top.length;
      while (j > 0 && top[j - 1].Age < e.Age) j--;
      top.splice(j, 0, e);
      if (top.length > 50) top.pop();
    }
    return top.map((e) => ({ Name: e.Name, Age: e.Age }));
  };
}

/**
 * Queries a server would also have run: they make shared code (locators, comparisons)
 * see many shapes, as it does in a real process, before the measured query runs.
 */
const OTHER_QUERIES = [
  '/Person/Name=Ann',
  '/Person/City!=Oslo&Active=true',
  '/Person/Email=null/order_asc=Name&limit=5',
  "/Person/Name>'M'&Age<=40/order_desc=City&limit=20",
  '/Person/id>=500&id<600/select=id',
  '/Person/Age=44/offset=3&limit=2',
  '/Person/City=Rome&Age>60/order_asc=Age&limit=3',
  '/Person/name.length>5/limit=10',
  '/Person/Active=false&email!=null/order_desc=id&limit=7',
];

function runOtherQueries(data) {
  for (const uri of OTHER_QUERIES) {
    const parsed = parseUri(uri);
    const q = compileQuery(parsed.conditions, toMetaConditions(parsed.meta));
    for (let i = 0; i < 5; i++) evaluate(data, q);
  }
}

export async function run({ quick = false } = {}) {
  const data = people(COUNT);
  runOtherQueries(data);
  const lib = libraryQuery(data);
  const uncached = libraryUncached(data);
  const hand = handWritten(data);
  const best = handTopK(data);
  const expected = JSON.stringify(hand());
  for (const [name, fn] of [
    ['library', lib],
    ['library uncached', uncached],
    ['hand-tuned top-k', best],
  ]) {
    if (JSON.stringify(fn()) !== expected) throw new Error(`query bench: ${name} output differs from the hand-written output`);
  }

  const roundMs = quick ? 250 : 450;
  const rounds = quick ? 5 : 9;
  const us = await alternate(
    {
      library: (w) => timeLoop(lib, w ?? roundMs),
      uncached: (w) => timeLoop(uncached, w ?? roundMs),
      hand: (w) => timeLoop(hand, w ?? roundMs),
      best: (w) => timeLoop(best, w ?? roundMs),
    },
    { rounds, warmup: quick ? 300 : 800 },
  );

  // Parse alone: emptying the cache first makes every call a miss.
  const miss = () => {
    clearParseCache();
    return parseUri(URI);
  };
  const hit = () => parseUri(URI);
  const parse = await alternate(
    { miss: (w) => timeLoop(miss, w ?? roundMs / 3), hit: (w) => timeLoop(hit, w ?? roundMs / 3) },
    { rounds, warmup: 200 },
  );

  const m = (xs) => median(xs);
  return {
    entities: COUNT,
    uri: URI,
    rounds,
    libraryUs: m(us.library),
    uncachedUs: m(us.uncached),
    handUs: m(us.hand),
    bestUs: m(us.best),
    ratio: m(us.hand) / m(us.library),
    ratioBest: m(us.best) / m(us.library),
    ratioUncached: m(us.hand) / m(us.uncached),
    parseMissUs: m(parse.miss),
    parseHitUs: m(parse.hit),
    raw: { ...us, parseMiss: parse.miss, parseHit: parse.hit },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    console.log(`${r.uri} over ${r.entities.toLocaleString('en-US')} entities, median of ${r.rounds} rounds`);
    console.log(
      table(
        ['subject', 'ms per query', 'speed vs hand-written'],
        [
          ['hand-written filter/sort/slice/map', fmt(r.handUs / 1000), '1.00x'],
          ['hand-tuned single pass with top-k', fmt(r.bestUs / 1000), `${(r.handUs / r.bestUs).toFixed(2)}x`],
          [
            'library (cached parse + compiled query)',
            fmt(r.libraryUs / 1000),
            `${r.ratio.toFixed(2)}x (${r.ratioBest.toFixed(2)}x the top-k)`,
          ],
          ['library (parse miss + compile each time)', fmt(r.uncachedUs / 1000), `${r.ratioUncached.toFixed(2)}x`],
        ],
      ),
    );
    console.log(`parseUri: miss ${fmt(r.parseMissUs)} µs, hit ${fmt(r.parseHitUs)} µs`);
  }
}
