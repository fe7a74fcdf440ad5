// `pnpm bench`: every benchmark in one run, one table of ratios (DESIGN 10).
//   node bench/run.mjs [--quick] [--only=query,scan,memory,memorykeys,handle,macro,regex,stream,export,cliwrites,node,express,koa,jsonserver,post]
// In-process benches (query, macro) run in child processes of their own; HTTP benches
// start each server and the load generator (autocannon) as separate child processes.
// Figures are medians of several rounds after a warm-up; the whole run is written to
// bench/results/latest.json.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESULTS_DIR } from './lib/data.mjs';
import { flags, fmt, table } from './lib/stats.mjs';
import { run as runHttp, SUITES } from './http.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const opts = flags();
const wanted = (name) => !opts.only || opts.only.includes(name);
const log = (m) => process.stderr.write(`${m}\n`);
const started = Date.now();

function child(script, extra = []) {
  const args = [path.join(HERE, script), '--json', ...(opts.quick ? ['--quick'] : []), ...extra];
  try {
    const out = execFileSync(process.execPath, args, { cwd: HERE, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    return JSON.parse(out.trim().split('\n').pop());
  } catch (error) {
    return {
      error: String(error.stderr || error.message)
        .trim()
        .split('\n')[0],
    };
  }
}

function machine() {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  return { nproc: os.availableParallelism?.() ?? os.cpus().length, cpu, node: process.version, platform: `${os.type()} ${os.release()}` };
}

const results = {
  machine: machine(),
  quick: opts.quick,
  date: new Date().toISOString(),
  load: {
    start: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  },
};
if (wanted('query')) {
  log('query evaluation (100k entities)...');
  results.query = child('query.mjs');
}
if (wanted('scan')) {
  log('search, distinct and paging (1M entities)...');
  results.scan = child('scan.mjs');
}
if (wanted('memory')) {
  log('memory of the in-memory storage (1M entities)...');
  results.memory = child('memory.mjs');
}
if (wanted('memorykeys')) {
  log('MemoryStorage by key (1k to 1M entities)...');
  results.memoryKeys = child('memory-keys.mjs');
}
if (wanted('handle')) {
  log('small GET through service.handle, CPU per request...');
  results.handle = child('handle.mjs');
}
if (wanted('macro')) {
  log('parse + macro rewrite...');
  results.macro = child('macro.mjs');
}
if (wanted('regex')) {
  log('search_regex engines: re2js vs V8 linear engine...');
  results.regex = child('regex.mjs');
}
if (wanted('stream')) {
  log('event streams: 1,000 subscribers, Resourcery vs a bare node:http SSE broadcaster...');
  results.stream = child('stream.mjs');
}
if (wanted('export')) {
  log('JSON Lines export of 100k entities: Resourcery vs a hand-written node:http server...');
  results.export = child('export.mjs', ['--cases=jsonl,jsonl-hand', `--rounds=${opts.quick ? 3 : 7}`]);
}
if (wanted('cliwrites')) {
  // Issue 30: at least 1,000 acknowledged (fsynced) POSTs a second, keyed and generated, flat from 1k to 1M entities.
  const sizes = `--sizes=${opts.quick ? '1000,100000' : '1000,1000000'}`;
  log(`CLI POSTs by data-file size (${sizes.slice(8)} entities), keyed and generated...`);
  results.cliWrites = ['id', 'generated'].map((key) => ({ key, ...child('cli-writes.mjs', [sizes, '--seconds=4', `--key=${key}`]) }));
}
const httpSuites = Object.keys(SUITES).filter(wanted);
if (httpSuites.length) Object.assign(results, await runHttp({ quick: opts.quick, only: httpSuites, log: (m) => log(m) }));

const x = (v) => `${v < 10 ? v.toPrecision(3) : v.toFixed(1)}x`;
const rows = [];
const skipped = (name, r) => rows.push([name, '-', '-', '-', '-', '-', r.skipped ? `skipped: ${r.skipped}` : `error: ${r.error}`]);
const cx = (v) => (v ? x(v) : '-');
const verdict = (ok) => (ok ? 'met' : 'NOT met');

if (results.query) {
  const q = results.query;
  if (q.error) skipped('query evaluation', q);
  else {
    rows.push([
      'query: 100k entities, ms/query (lib vs filter/sort/slice/map)',
      fmt(q.libraryUs / 1000),
      fmt(q.handUs / 1000),
      x(q.ratio),
      '-',
      '>= 0.8x',
      verdict(q.ratio >= 0.8),
    ]);
    rows.push([
      '  same, vs hand-tuned single pass with top-k',
      fmt(q.libraryUs / 1000),
      fmt(q.bestUs / 1000),
      x(q.ratioBest),
      '-',
      '>= 0.5x',
      verdict(q.ratioBest >= 0.5),
    ]);
    rows.push([
      '  same, parse miss + compile on every query',
      fmt(q.uncachedUs / 1000),
      fmt(q.handUs / 1000),
      x(q.ratioUncached),
      '-',
      '(info)',
      '',
    ]);
    rows.push([
      '  parseUri of that URI, µs: cache miss / hit',
      `${fmt(q.parseMissUs)} / ${fmt(q.parseHitUs)}`,
      '-',
      '-',
      '-',
      '(info)',
      '',
    ]);
  }
}
if (results.scan) {
  const s = results.scan;
  if (s.error) skipped('search and distinct (1M)', s);
  else {
    const c = s.cases;
    // ratio = baseline ms / library ms (higher is better, as everywhere in the table).
    const row = (label, k, baseMs, target, ok) => [label, fmt(c[k].libraryMs), fmt(baseMs), x(baseMs / c[k].libraryMs), '-', target, ok];
    rows.push(
      row(
        'search `99999@`, 1M entities, ms (lib vs hand-written property scan)',
        'search',
        c.search.handMs,
        '>= 0.8x',
        verdict(c.search.ratio >= 0.8),
      ),
    );
    rows.push(row('  same, vs a scan of precomputed lower-cased texts', 'search', c.search.limitMs, '(info)', ''));
    rows.push(
      row(
        '  search `nowhere` (letters only, no match)',
        'searchLetters',
        c.searchLetters.handMs,
        '>= 0.8x',
        verdict(c.searchLetters.ratio >= 0.8),
      ),
    );
    rows.push(
      row(
        'distinct of select=City, 1M entities, ms (lib vs a Set)',
        'distinct',
        c.distinct.handMs,
        '>= 0.5x',
        verdict(c.distinct.ratio >= 0.5),
      ),
    );
    rows.push(row('offset=N-10 without order, 1M, ms (lib vs slice)', 'offset', c.offset.handMs, '(info)', ''));
    rows.push(row('order_asc=Age&offset=N-10, 1M, ms (lib vs sort + slice)', 'orderOffset', c.orderOffset.handMs, '(info)', ''));
  }
}
if (results.memory) {
  const m = results.memory;
  if (m.error) skipped('memory', m);
  else {
    const last = m.steps[m.steps.length - 1];
    rows.push([
      'memory, 1M entities, bytes/entity (resource vs raw objects)',
      fmt(last.bytesPerEntity),
      fmt(m.rawBytesPerEntity),
      x(1 / last.ratio),
      '-',
      '>= 0.667x (1.5x)',
      verdict(last.ratio <= 1.5),
    ]);
  }
}
if (results.memoryKeys) {
  const k = results.memoryKeys;
  if (k.error) skipped('MemoryStorage by key', k);
  else {
    // Flat from the smallest size to the largest: the largest's time within 2x the smallest's.
    const [small, large] = [k.rows[0], k.rows[k.rows.length - 1]];
    for (const [label, field] of [
      ['GET /Person/<key>', 'lookup'],
      ['POST with key', 'keyed'],
      ['POST generating the key', 'generated'],
    ])
      rows.push([
        `MemoryStorage ${label}, ms: ${large.entities.toLocaleString('en')} vs ${small.entities.toLocaleString('en')} entities`,
        fmt(large[field]),
        fmt(small[field]),
        x(small[field] / large[field]),
        '-',
        '>= 0.5x (flat)',
        verdict(large[field] <= 2 * small[field]),
      ]);
  }
}
if (results.node) {
  const n = results.node;
  if (n.error) skipped('node adapter GET', n);
  else {
    rows.push([
      'GET 10k, req/s: node adapter vs bare node:http',
      fmt(n.rps.lib),
      fmt(n.rps.bare),
      x(n.ratio),
      cx(n.cpuRatio),
      '>= 0.85x',
      verdict(n.ratio >= 0.85),
    ]);
    rows.push([
      '  same, vs bare node:http with top-k',
      fmt(n.rps.lib),
      fmt(n.rps.best),
      x(n.ratioBest),
      cx(n.cpuRatioBest),
      '>= 0.5x',
      verdict(n.ratioBest >= 0.5),
    ]);
  }
}
if (results.nodesmall) {
  const n = results.nodesmall;
  if (n.error) skipped('node adapter small GET', n);
  else
    rows.push([
      '  small GET (1 of 50), node adapter vs bare node:http',
      fmt(n.rps.lib),
      fmt(n.rps.bare),
      x(n.ratio),
      cx(n.cpuRatio),
      '>= 0.9x',
      verdict(n.ratio >= 0.9),
    ]);
}
if (results.handle) {
  const h = results.handle;
  if (h.error) skipped('service.handle small GET', h);
  else
    rows.push([
      '  same request, service.handle vs bare handler, CPU µs (no HTTP)',
      fmt(h.libraryUs),
      fmt(h.bareUs),
      x(h.bareUs / h.libraryUs),
      '-',
      '(info)',
      '',
    ]);
  if (h.answerUs !== undefined)
    rows.push([
      '  same, service.answer (what the adapters call) vs bare handler',
      fmt(h.answerUs),
      fmt(h.bareUs),
      x(h.bareUs / h.answerUs),
      '-',
      '(info)',
      '',
    ]);
  if (h.listeners)
    rows.push([
      '  same, node listeners on a socket-less req/res, CPU µs',
      fmt(h.listeners.adapterUs),
      fmt(h.listeners.bareUs),
      x(h.listeners.bareUs / h.listeners.adapterUs),
      '-',
      '(info)',
      '',
    ]);
}
for (const name of ['express', 'koa']) {
  const a = results[name];
  if (!a) continue;
  if (a.error || a.skipped) skipped(`${name} adapter GET`, a);
  else
    rows.push([
      `small GET, req/s: ${name} adapter vs bare ${name}`,
      fmt(a.rps.lib),
      fmt(a.rps.bare),
      x(a.ratio),
      cx(a.cpuRatio),
      '>= 1.0x',
      verdict(a.ratio >= 1.0),
    ]);
}
if (results.jsonserver) {
  const j = results.jsonserver;
  if (j.error) skipped('json-server GET', j);
  else {
    rows.push([
      'GET 10k, req/s: CLI vs json-server 0.17 (DESIGN)',
      fmt(j.rps.lib),
      fmt(j.rps.js),
      x(j.ratio),
      cx(j.cpuRatio),
      '>= 10x',
      verdict(j.ratio >= 10),
    ]);
    rows.push([
      "  same figures against the issue's target",
      fmt(j.rps.lib),
      fmt(j.rps.js),
      x(j.ratio),
      cx(j.cpuRatio),
      '>= 3x',
      verdict(j.ratio >= 3),
    ]);
  }
}
if (results.post) {
  const p = results.post;
  if (p.error) skipped('POST writes', p);
  else
    rows.push(['POST one entity, writes/s: CLI vs json-server', fmt(p.rps.lib), fmt(p.rps.js), x(p.ratio), cx(p.cpuRatio), '(info)', '']);
}
if (results.macro) {
  const m = results.macro;
  if (m.error) skipped('parse + macro rewrite', m);
  else {
    rows.push([
      'cached parseUri + macro rewrite, µs/request',
      fmt(m.us.parseAndRewrite),
      '-',
      '-',
      '-',
      '< 5 µs',
      verdict(m.us.parseAndRewrite < 5),
    ]);
    rows.push(['  parseUri hit alone / rewrite alone, µs', `${fmt(m.us.parse)} / ${fmt(m.us.rewrite)}`, '-', '-', '-', '(info)', '']);
  }
}
if (results.regex) {
  const r = results.regex;
  if (r.error) skipped('search_regex engines', r);
  else
    r.patterns.forEach((p, i) => {
      const what = `search_regex=${p.pattern}, ${r.entities} x ${r.characters / 1000}k chars, ms: re2js vs V8 linear engine`;
      rows.push([i === 0 ? what : `  ${what}`, fmt(p.re2jsMs), fmt(p.oldMs), x(p.ratio), '-', '>= 1x', verdict(p.ratio >= 1)]);
      rows.push([`    same pattern, whole GET through the service, ms`, fmt(p.serviceMs), '-', '-', '-', '(info)', '']);
    });
}
if (results.stream) {
  const st = results.stream;
  if (st.error) skipped('event streams', st);
  else {
    const n = st.subscribers.toLocaleString('en');
    rows.push([
      `event streams, ${n} subscribers, events/s (lib vs bare node:http SSE)`,
      fmt(st.lib.eventsPerSecond),
      fmt(st.bare.eventsPerSecond),
      x(st.ratio),
      cx(st.cpuRatio),
      '>= 0.5x',
      verdict(st.ratio >= 0.5),
    ]);
    // Lower is better for a delay: the ratio is the baseline's over the library's.
    rows.push([
      '  same, p99 ms from raise to receipt (paced)',
      fmt(st.lib.p99),
      fmt(st.bare.p99),
      x(st.bare.p99 / st.lib.p99),
      '-',
      '>= 0.5x (2x)',
      verdict(st.lib.p99 <= 2 * st.bare.p99),
    ]);
    rows.push([
      '  memory per idle subscriber, KB (heap + external)',
      fmt(st.lib.bytesPerSubscriber / 1024),
      fmt(st.bare.bytesPerSubscriber / 1024),
      '-',
      '-',
      '< 20 KB',
      verdict(st.lib.bytesPerSubscriber < 20 * 1024),
    ]);
  }
}
if (results.export) {
  const e = results.export;
  if (e.error) skipped('JSON Lines export', e);
  else {
    // The ratio is speed: the hand-written server's time over ours; the goal is at most 1.1x its time.
    rows.push([
      `JSON Lines export, ${e.count.toLocaleString('en')} entities, ms (lib vs hand-written node:http)`,
      fmt(e.results.jsonl.ms),
      fmt(e.results['jsonl-hand'].ms),
      x(1 / e.jsonlRatio),
      cx(1 / e.jsonlCpuRatio),
      '>= 0.91x (1.1x time)',
      verdict(e.jsonlRatio <= 1.1),
    ]);
  }
}

for (const w of results.cliWrites ?? []) {
  const label = w.key === 'id' ? 'keyed' : 'generated keys';
  if (w.error) skipped(`CLI POSTs, ${label}`, w);
  else
    for (const r of w.rows)
      rows.push([
        `CLI POSTs, ${label}, ${r.size.toLocaleString('en')} entities, writes/s (8 writers, fsync each)`,
        fmt(r.writesPerSecond),
        '1,000',
        x(r.writesPerSecond / 1000),
        x(r.writesPerCpu / 1000),
        '>= 1.0x (1,000/s)',
        verdict(r.writesPerSecond >= 1000),
      ]);
}

mkdirSync(RESULTS_DIR, { recursive: true });
writeFileSync(path.join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
const mc = results.machine;
console.log(
  `\nResourcery benchmarks${opts.quick ? ' (--quick)' : ''}: ${mc.nproc} CPUs (${mc.cpu}), Node ${mc.node}, ${Math.round((Date.now() - started) / 1000)} s`,
);
console.log('ratio = Resourcery speed / baseline speed (higher is better), medians of rounds run side by side;');
console.log('per CPU-s = the same ratio in requests per CPU-second of each server process (less sensitive to other load)');
console.log(
  `load average at start / end: ${results.load.start} / ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
console.log(table(['benchmark', 'Resourcery', 'baseline', 'ratio', 'per CPU-s', 'target', ''], rows));
console.log(`\nRaw figures: ${path.relative(process.cwd(), path.join(RESULTS_DIR, 'latest.json'))}`);
