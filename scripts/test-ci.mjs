#!/usr/bin/env node
// Runs jest and prints one plain closing line: "tests: N passed, N failed".
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

const out = '.jest-results.json';
rmSync(out, { force: true });
const run = spawnSync(process.execPath, ['node_modules/jest/bin/jest.js', '--json', `--outputFile=${out}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
});
let results;
try {
  results = JSON.parse(readFileSync(out, 'utf8'));
} catch {
  console.log('tests: 0 passed, 1 failed');
  process.exit(run.status || 1);
}
const failedSuites = results.numFailedTestSuites ?? 0;
const failed = results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
console.log(`tests: ${results.numPassedTests} passed, ${failed} failed`);
process.exit(failed > 0 || failedSuites > 0 || run.status !== 0 ? 1 : 0);
