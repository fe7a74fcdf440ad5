// Full scans at 1M entities through `service.handle` (raw JSON, no HTTP) against what a
// developer writes by hand for the same answer, timed side by side in one process:
// search over every property, distinct of a selected property, and paging far into the
// data with and without an order.
//   node bench/scan.mjs [--quick] [--json] [--count=1000000]
import { createService, MemoryStorage } from '@resourcery/core';
import { people } from './lib/data.mjs';
import { alternate, flags, fmt, median, table } from './lib/stats.mjs';

const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);

/** Calls the async `fn` until `ms` have passed (at least twice); mean ms per call. */
async function timeCalls(fn, ms) {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (n < 2 || now - start < ms) {
    await fn();
    n++;
    now = performance.now();
  }
  return (now - start) / n;
}

/** A search over every property for `needle`, by the library and by hand (see cases). */
function searchCase(data, texts, name, label, needle) {
  return {
    name,
    label,
    uri: `/Person/_/search=${encodeURIComponent(needle)}`,
    hand: () => {
      const out = [];
      for (const e of data) {
        for (const k in e) {
          const v = e[k];
          if (typeof v === 'string' && v.toLowerCase().includes(needle)) {
            out.push(e);
            break;
          }
        }
      }
      return out;
    },
    limit: () => {
      const out = [];
      for (let i = 0; i < texts.length; i++) if (texts[i].includes(needle)) out.push(data[i]);
      return out;
    },
  };
}

function cases(data) {
  const n = data.length;
  // The lower-cased JSON text of every entity, made once outside the timing: the least a search can do per entity.
  const texts = data.map((e) => JSON.stringify(e).toLowerCase());
  return [
    // Digits and punctuation only: the library need not lower-case the strings it tests (the hand-written code does).
    searchCase(data, texts, 'search', 'search over every property', '99999@'),
    // Letters only, found nowhere: every string lower-cased and read to its end on both sides.
    searchCase(data, texts, 'searchLetters', 'search over every property, letters (no match)', 'nowhere'),
    {
      name: 'distinct',
      label: 'distinct of one selected property',
      uri: '/Person/_/select=City&distinct=true',
      hand: () => {
        const seen = new Set();
        const out = [];
        for (const e of data) {
          const c = e.City;
          if (!seen.has(c)) {
            seen.add(c);
            out.push({ City: c });
          }
        }
        return out;
      },
    },
    {
      name: 'offset',
      label: 'offset N-10, no order',
      uri: `/Person/_/offset=${n - 10}`,
      hand: () => data.slice(n - 10),
    },
    {
      name: 'orderOffset',
      label: 'order_asc=Age, offset N-10',
      uri: `/Person/_/order_asc=Age&offset=${n - 10}`,
      hand: () =>
        data
          .map((e, i) => [e, i])
          .sort((a, b) => a[0].Age - b[0].Age || a[1] - b[1])
          .slice(n - 10)
          .map((x) => x[0]),
    },
  ];
}

export async function run({ quick = false, count = 1_000_000 } = {}) {
  // Parsed from JSON text, as a data file is loaded (flat strings, as a server holds them).
  const data = JSON.parse(JSON.stringify(people(count)));
  const service = createService({ searchBudget: Number.MAX_SAFE_INTEGER });
  service.addResource({ name: 'Person', storage: new MemoryStorage(data) });
  const viaLibrary = async (uri) => {
    const res = await service.handle({ method: 'GET', uri, headers: { accept: 'application/json;raw=true' } });
    if (res.status >= 300) throw new Error(`scan bench: ${uri} answered ${res.status}: ${String(res.body).slice(0, 200)}`);
    // No match is a 204 without a body; the hand-written answer is then [].
    return res.status === 204 ? '[]' : res.body;
  };
  const roundMs = quick ? 300 : 700;
  const rounds = quick ? 3 : 7;
  const out = { entities: count, rounds, cases: {} };
  for (const c of cases(data)) {
    const expected = JSON.stringify(c.hand());
    if ((await viaLibrary(c.uri)) !== expected) throw new Error(`scan bench: ${c.uri} differs from the hand-written answer`);
    if (c.limit && JSON.stringify(c.limit()) !== expected) throw new Error(`scan bench: ${c.name} limit baseline differs`);
    const subjects = {
      library: (w) => timeCalls(() => viaLibrary(c.uri), w ?? roundMs),
      hand: (w) => timeCalls(async () => JSON.stringify(c.hand()), w ?? roundMs),
    };
    if (c.limit) subjects.limit = (w) => timeCalls(async () => JSON.stringify(c.limit()), w ?? roundMs);
    const ms = await alternate(subjects, { rounds, warmup: quick ? 300 : 600 });
    const m = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)]));
    out.cases[c.name] = {
      label: c.label,
      uri: c.uri,
      libraryMs: m.library,
      handMs: m.hand,
      limitMs: m.limit ?? null,
      ratio: m.hand / m.library,
      ratioLimit: m.limit ? m.limit / m.library : null,
      raw: ms,
    };
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run({ ...opts, count: arg('count', 1_000_000) });
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    console.log(
      `${r.entities.toLocaleString('en-US')} entities, ms per request, median of ${r.rounds} rounds (ratio: hand ms / library ms)`,
    );
    const rows = Object.values(r.cases).map((c) => [
      c.label,
      fmt(c.libraryMs),
      fmt(c.handMs),
      `${c.ratio.toFixed(2)}x`,
      c.limitMs === null ? '-' : `${fmt(c.limitMs)} (${c.ratioLimit.toFixed(2)}x)`,
    ]);
    console.log(table(['case', 'library', 'hand-written', 'ratio', 'precomputed texts'], rows));
  }
}
