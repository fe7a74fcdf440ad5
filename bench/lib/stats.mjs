// Timing and reporting helpers shared by the bench scripts.

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The value at fraction `q` (0-1) of `values` sorted, the nearest rank (`quantile(v, 0.9)`: the 90th percentile). */
export function quantile(values, q) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.round(q * (s.length - 1))];
}

/** Milliseconds one call of `fn` (awaited) takes. */
export async function elapsedMs(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Command-line flags: `--quick`, `--json`, `--only a,b`. */
export function flags(argv = process.argv.slice(2)) {
  const only = argv.find((a) => a.startsWith('--only='));
  return {
    quick: argv.includes('--quick'),
    json: argv.includes('--json'),
    only: only ? only.slice(7).split(',') : null,
  };
}

/** A numeric flag `--name=N`, or `fallback` when it is not given. */
export function arg(name, fallback, argv = process.argv) {
  return Number(argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
}

/**
 * Calls `fn` in a tight loop for about `ms` milliseconds and returns the mean time of one
 * call in microseconds. `fn` gets the iteration number and returns a value that is
 * folded into a sink, so the JIT cannot drop the work.
 */
export function timeLoop(fn, ms) {
  let n = 0;
  let sink = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(ms * 1e6));
  let now = start;
  // Check the clock every `batch` calls so that reading it costs nothing measurable.
  const batch = Math.max(1, guessBatch(fn));
  while (now < deadline) {
    for (let i = 0; i < batch; i++) sink ^= touch(fn(n++));
    now = process.hrtime.bigint();
  }
  globalThis.__benchSink = sink;
  return Number(now - start) / 1e3 / n;
}

function guessBatch(fn) {
  const t0 = process.hrtime.bigint();
  touch(fn(-1));
  const ns = Number(process.hrtime.bigint() - t0);
  return ns > 1e6 ? 1 : Math.min(10_000, Math.ceil(1e6 / Math.max(ns, 50)));
}

function touch(value) {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number') return value | 0;
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  return 1;
}

/** The same for async functions (each call awaited in turn). */
export async function timeLoopAsync(fn, ms) {
  let n = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(ms * 1e6));
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 200; i++) await fn(n++);
    now = process.hrtime.bigint();
  }
  return Number(now - start) / 1e3 / n;
}

/**
 * Side-by-side rounds: after a warm-up of each, rounds alternate A B B A ... so that
 * drift (thermal, GC, other load) falls on both equally. Returns every round's figure.
 */
export async function alternate(subjects, { rounds, warmup }) {
  const figures = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
  const names = Object.keys(subjects);
  for (const name of names) await subjects[name](warmup);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) figures[name].push(await subjects[name]());
  }
  return figures;
}

export function fmt(value, digits = 3) {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(digits);
}

/** A plain-text table with right-aligned numbers. */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c ?? '')));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(all[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}
