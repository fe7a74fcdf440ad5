// search_regex engines (issue 11 item 3): re2js, which the library runs, against the
// engine it ran before, V8's experimental linear engine (`new RegExp(p, 'l')`, only with
// `node --enable-experimental-regexp-engine`). That flag is process-wide, so the old engine
// is measured in a child process started with it; the library never sets it.
// Both scan 20 values of 100,000 characters (the most one regular expression reads of a
// value) that do not match, so every character is read; the old engine, which has no `i`
// flag, lower-cased the subject as the library then did.
//   node bench/regex.mjs [--quick] [--json]
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { flags, fmt, median, table } from './lib/stats.mjs';

const PATTERNS = [
  // Four unbounded repeats and no match: a backtracking engine never finishes, a linear one reads every character.
  'a.*a.*a.*a.*c',
  // An ordinary search: an address-like word.
  '[a-z]+@example\\.com',
];
const ENTITIES = 20;
const LENGTH = 100_000;

/** Lower-case letters (no `c`, no `@`) and spaces from a fixed seed: the same text on every machine. */
function texts() {
  let seed = 1;
  const letters = 'abdefghijklmnopqrstuvwxyz ';
  return Array.from({ length: ENTITIES }, () => {
    let s = '';
    while (s.length < LENGTH) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      s += letters[seed % letters.length];
    }
    return s;
  });
}

/** Milliseconds per pass over every text, median of `rounds` after one warm-up pass. */
function passes(test, rounds) {
  const values = texts();
  const pass = () => {
    const start = performance.now();
    let matched = 0;
    for (const v of values) if (test(v)) matched++;
    if (matched !== 0) throw new Error('regex bench: the texts must not match');
    return performance.now() - start;
  };
  pass();
  return median(Array.from({ length: rounds }, pass));
}

/** The old engine, in this process (run with the flag). */
function oldEngine(rounds) {
  return PATTERNS.map((pattern) => {
    // The patterns hold no upper-case letters, so lower-casing them (as the library did) changes nothing.
    // eslint-disable-next-line no-invalid-regexp -- 'l' exists only under --enable-experimental-regexp-engine, which this child runs with
    const re = new RegExp(pattern, 'l');
    return passes((v) => re.test(v.toLowerCase()), rounds);
  });
}

async function re2js(rounds) {
  // re2js as the library compiles it (linear-regex.ts): the dependency of @resourcery/core.
  const require = createRequire(fileURLToPath(import.meta.resolve('@resourcery/core')));
  const { RE2JS } = await import(pathToFileURL(require.resolve('re2js')).href);
  return PATTERNS.map((pattern) => {
    const re = RE2JS.compile(RE2JS.translateRegExp(pattern), RE2JS.CASE_INSENSITIVE);
    return passes((v) => re.test(v), rounds);
  });
}

/** The whole request through the service: GET /Doc/_/search_regex=... (204, nothing matches). */
async function service(rounds) {
  const { createService, MemoryStorage } = await import('@resourcery/core');
  const svc = createService();
  svc.addResource({ name: 'Doc', storage: new MemoryStorage(texts().map((Text, Id) => ({ Id, Text }))) });
  const out = [];
  for (const pattern of PATTERNS) {
    const uri = `/Doc/_/search_regex=${encodeURIComponent(pattern)}`;
    const once = async () => {
      const start = performance.now();
      const r = await svc.handle({ method: 'GET', uri });
      if (r.status !== 204) throw new Error(`regex bench: ${uri} answered ${r.status}`);
      return performance.now() - start;
    };
    await once();
    const figures = [];
    for (let i = 0; i < rounds; i++) figures.push(await once());
    out.push(median(figures));
  }
  return out;
}

export async function run({ quick = false } = {}) {
  const rounds = quick ? 3 : 7;
  // Each old-engine pass takes seconds: fewer rounds.
  const oldRounds = quick ? 1 : 3;
  const child = execFileSync(
    process.execPath,
    ['--enable-experimental-regexp-engine', fileURLToPath(import.meta.url), '--old-engine', String(oldRounds)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const old = JSON.parse(child.trim().split('\n').pop());
  const chosen = await re2js(rounds);
  const viaService = await service(rounds);
  return {
    entities: ENTITIES,
    characters: LENGTH,
    rounds,
    oldRounds,
    patterns: PATTERNS.map((pattern, i) => ({
      pattern,
      re2jsMs: chosen[i],
      oldMs: old[i],
      ratio: old[i] / chosen[i],
      serviceMs: viaService[i],
    })),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--old-engine');
  if (at >= 0) process.stdout.write(`${JSON.stringify(oldEngine(Number(process.argv[at + 1])))}\n`);
  else {
    const opts = flags();
    const r = await run(opts);
    if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
    else {
      console.log(`search_regex over ${r.entities} values of ${r.characters} characters, none matching; ms per scan, medians`);
      console.log(
        table(
          ['pattern', 're2js', 'V8 linear engine', 'ratio', 'GET through the service'],
          r.patterns.map((p) => [p.pattern, fmt(p.re2jsMs), fmt(p.oldMs), `${fmt(p.ratio)}x`, fmt(p.serviceMs)]),
        ),
      );
    }
  }
}
