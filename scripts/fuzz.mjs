// The fuzz harness (packages/core/test/fuzz.test.ts) for a long run, with progress:
//   pnpm fuzz [--requests 1000000] [--seed 7] [--progress 10000] [--hang-ms 30000]
// A failure prints the request number and the request; the same seed replays it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
function option(name, fallback) {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return fallback;
  const value = args[i].includes('=') ? args[i].split('=')[1] : args[i + 1];
  if (value === undefined || !/^\d+$/.test(value)) {
    console.error(`--${name} takes a whole number`);
    process.exit(2);
  }
  return value;
}
const requests = option('requests', '1000000');
const env = {
  ...process.env,
  FUZZ_REQUESTS: requests,
  FUZZ_SEED: option('seed', String(Date.now() % 1_000_000_000)),
  FUZZ_PROGRESS: option('progress', String(Math.max(1000, Math.min(10_000, Number(requests) / 100)))),
  FUZZ_HANG_MS: option('hang-ms', '30000'),
};
console.error(`fuzz: ${env.FUZZ_REQUESTS} requests, seed ${env.FUZZ_SEED}`);
const started = Date.now();
const run = spawnSync(process.execPath, [path.join(root, 'node_modules/jest/bin/jest.js'), 'packages/core/test/fuzz.test.ts'], {
  cwd: root,
  env,
  stdio: 'inherit',
});
console.error(`fuzz: ${run.status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s (seed ${env.FUZZ_SEED})`);
process.exit(run.status ?? 1);
