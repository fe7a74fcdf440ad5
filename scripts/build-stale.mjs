#!/usr/bin/env node
// Builds the packages whose dist is older than their sources, and only those (in dependency
// order, with the parser generated first): `pnpm start` names the four the CLI runs on,
// `pnpm test` all of them. Nothing runs when every dist is fresh.
//   node scripts/build-stale.mjs [package...]   (default: every package under packages/)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

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

/** Builds the stale ones of `packages`; exits the process when a build fails. */
export function buildStale(packages) {
  const outdated = packages.filter(stale);
  if (outdated.length === 0) return;
  process.stderr.write(`Building (changed: ${outdated.join(', ')})...\n`);
  const shell = process.platform === 'win32';
  const steps = [
    ...(outdated.includes('core') ? [['run', 'gen']] : []),
    ['-r', ...outdated.flatMap((p) => ['--filter', `./packages/${p}`]), 'run', 'build'],
  ];
  for (const args of steps) {
    const build = spawnSync('pnpm', args, { stdio: 'inherit', shell });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const named = process.argv.slice(2);
  const all = readdirSync('packages', { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(`packages/${d.name}/package.json`))
    .map((d) => d.name);
  buildStale(named.length > 0 ? named : all);
}
