#!/usr/bin/env node
// `pnpm start [-- options]`: serves a working copy of examples/data/people.json (in .data/,
// which git ignores), so trying out POST/PATCH/DELETE never changes the tracked example
// file. Builds first only when a package the CLI runs on is older than its sources;
// arguments are passed to `resourcery serve` (`pnpm start -- --port 3000 --read-only`).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const PACKAGES = ['core', 'node', 'sql', 'cli'];

/** Newest (or oldest) modification time under a directory; undefined when it is missing or empty. */
function mtimeUnder(dir, pick) {
  if (!existsSync(dir)) return undefined;
  let found;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const t = statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs;
    found = found === undefined ? t : pick(found, t);
  }
  return found;
}

function stale(pkg) {
  const root = `packages/${pkg}`;
  const built = mtimeUnder(`${root}/dist`, Math.min);
  if (built === undefined) return true;
  const inputs = [
    mtimeUnder(`${root}/src`, Math.max),
    ...['package.json', 'tsup.config.ts', 'peggy.config.json'].map((f) =>
      existsSync(`${root}/${f}`) ? statSync(`${root}/${f}`).mtimeMs : undefined,
    ),
    // The build every package's tsup config shares.
    statSync('tsup.base.ts').mtimeMs,
  ];
  return inputs.some((t) => t !== undefined && t > built);
}

const outdated = PACKAGES.filter(stale);
if (outdated.length > 0) {
  process.stderr.write(`Building (changed: ${outdated.join(', ')})...\n`);
  const build = spawnSync('pnpm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

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
