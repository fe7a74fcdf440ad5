// What a CPU profile sampled while the event loop stalled: for each stall noted by
// bench/stall.mjs --cpu-prof=DIR (DIR/stall-NAME.stalls.json beside DIR/stall-NAME.cpuprofile),
// the functions that held the time, inclusive and self.
//   node bench/lib/stalls.mjs DIR/stall-NAME.cpuprofile [--top=5]
import { readFileSync } from 'node:fs';
import { arg } from './stats.mjs';

const file = process.argv[2];
const prof = JSON.parse(readFileSync(file, 'utf8'));
const stalls = JSON.parse(readFileSync(file.replace(/\.cpuprofile$/, '.stalls.json'), 'utf8'));
const top = arg('top', 5);
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
};

// Each sample's time (the profile's clock, microseconds) and the time it stands for.
const samples = [];
let t = prof.startTime;
for (let i = 0; i < prof.samples.length; i++) {
  t += prof.timeDeltas[i];
  samples.push({ t, node: nodes.get(prof.samples[i]), us: prof.timeDeltas[i + 1] ?? 0 });
}

const longest = stalls
  .map(([start, end]) => ({ start, end, ms: (end - start) / 1000 }))
  .sort((a, b) => b.ms - a.ms)
  .slice(0, top);
console.log(`${stalls.length} stalls over 20 ms; the ${longest.length} longest:`);
for (const stall of longest) {
  const inclusive = new Map();
  const self = new Map();
  for (const s of samples) {
    if (s.t < stall.start || s.t > stall.end) continue;
    const ms = s.us / 1000;
    self.set(label(s.node), (self.get(label(s.node)) ?? 0) + ms);
    const seen = new Set();
    for (let id = s.node.id; id !== undefined; id = parent.get(id)) seen.add(label(nodes.get(id)));
    for (const l of seen) inclusive.set(l, (inclusive.get(l) ?? 0) + ms);
  }
  console.log(`\n--- ${stall.ms.toFixed(0)} ms, ${((stall.start - prof.startTime) / 1000).toFixed(0)} ms into the profile`);
  const byTime = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  for (const [l, ms] of byTime(inclusive, 16)) if (!l.startsWith('(root)')) console.log(`  incl ${ms.toFixed(1).padStart(7)}  ${l}`);
  for (const [l, ms] of byTime(self, 8)) console.log(`  self ${ms.toFixed(1).padStart(7)}  ${l}`);
}
