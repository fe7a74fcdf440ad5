// The small GET (`/Person/id=7` over 50 entities) through the node adapter of this build
// against the same adapter of another build, as independent pairs of fresh servers
// (`measurePairs` in lib/http.mjs: start order turning, pinned CPUs where the machine
// allows). A change on the small GET's path is a few percent, less than the spread of one
// start of a server: only the median of many pairs shows it, each pair's own ratio taken
// under the same conditions. Run it with the two builds swapped too (`--swap`): a ratio
// that is the method's own shows in both directions.
//   pnpm run build && node bench/small-get-ab.mjs --before=DIR [--pairs=12] [--swap] [--json]
// DIR: a build copied aside, as bench/small-get-cold.mjs --before takes it.
import os from 'node:os';
import { writeDataFile } from './lib/data.mjs';
import { measurePairs, startLoadGenerator } from './lib/http.mjs';
import { arg, flags } from './lib/stats.mjs';

export async function run({ before, pairs = 12, swap = false }) {
  const data = writeDataFile('people-50.json', 50);
  const specs = {
    after: ['this build (node adapter)', 'servers/node-small.mjs', [data, 'adapter']],
    before: [`${before} (node adapter)`, 'servers/node-small.mjs', [data, 'adapter', before]],
  };
  const load = await startLoadGenerator();
  try {
    const ordered = swap ? { before: specs.before, after: specs.after } : specs;
    const m = await measurePairs(load, ordered, '/Person/id=7', { pairs, rounds: 2, duration: 1, warmup: 1 });
    const [a, b] = Object.keys(ordered);
    return { measured: a, over: b, ratio: m.ratio, cpuRatio: m.cpuRatio, pinned: m.pinned, pairs: m.pairs, load: os.loadavg()[0] };
  } finally {
    await load.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const before = process.argv.find((a) => a.startsWith('--before='))?.slice(9);
  if (before === undefined) throw new Error('--before=DIR: the build to compare with (see the header of this file)');
  const r = await run({ before, pairs: arg('pairs', 12), swap: process.argv.includes('--swap') });
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    const perPair = r.pairs.map((p) => (p.perCpuSecond[r.measured] / p.perCpuSecond[r.over]).toFixed(2)).join(' ');
    console.log(
      `small GET, ${r.measured} over ${r.over}: ${r.ratio.toFixed(3)}x requests/s, ${r.cpuRatio.toFixed(3)}x per CPU-s (median of ${r.pairs.length} pairs: ${perPair}; pinned ${r.pinned}, load ${r.load.toFixed(1)})`,
    );
  }
}
