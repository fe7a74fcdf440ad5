#!/usr/bin/env node
// `pnpm start [-- options]`: serves a working copy of examples/data/people.json (in .data/,
// which git ignores), so trying out POST/PATCH/DELETE never changes the tracked example
// file. Builds first only the packages the CLI runs on whose dist is older than their sources;
// arguments are passed to `resourcery serve` (`pnpm start -- --port 3000 --read-only`).
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { buildStale } from './build-stale.mjs';

// Only what the CLI runs on, and only the packages whose dist is older than their sources.
buildStale(['core', 'node', 'sql', 'cli']);

const file = '.data/people.json';
if (!existsSync(file)) {
  mkdirSync('.data', { recursive: true });
  copyFileSync('examples/data/people.json', file);
}
// pnpm forwards a literal `--` when given one (`pnpm start -- --port 3000`); it is not a data source.
const passed = process.argv.slice(2).filter((a, i) => !(i === 0 && a === '--'));
const args = ['packages/cli/dist/cli.js', 'serve', file, '--port', '8080', ...passed];
const child = spawn(process.execPath, args, { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 0));
