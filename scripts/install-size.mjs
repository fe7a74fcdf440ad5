#!/usr/bin/env node
// What an install costs an app: packs the packages as they would be published, installs
// them with npm into empty apps in a temporary directory, and counts the packages that
// land in node_modules (every folder with a package.json, nested ones too) and their size
// on disk (du). Run after `pnpm run build`: `node scripts/install-size.mjs` (docs/install.md).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'resourcery-size-'));
const tarballs = join(work, 'tarballs');
mkdirSync(tarballs);
const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
const pnpm = /pnpm/.test(process.env.npm_execpath ?? '') ? [process.execPath, process.env.npm_execpath] : ['pnpm'];
for (const name of ['core', 'node', 'sql', 'cli'])
  execFileSync(pnpm[0], [...pnpm.slice(1), 'pack', '--pack-destination', tarballs], { cwd: join(root, 'packages', name), stdio: 'pipe' });
const tarball = (name) =>
  join(
    tarballs,
    readdirSync(tarballs).find((f) => f.startsWith(`resourcery-${name}-`)),
  );

/** Package folders under node_modules, nested ones included. */
function countPackages(dir) {
  let count = 0;
  if (!existsSync(dir)) return 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === '.bin' || entry.name === '.cache') continue;
    const folders = entry.name.startsWith('@')
      ? readdirSync(join(dir, entry.name), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => join(dir, entry.name, e.name))
      : [join(dir, entry.name)];
    for (const folder of folders) {
      if (existsSync(join(folder, 'package.json'))) count++;
      count += countPackages(join(folder, 'node_modules'));
    }
  }
  return count;
}

const rows = [];
function measure(label, specs) {
  const app = join(work, `app${rows.length}`);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'size-app', private: true, version: '1.0.0' }));
  execFileSync('npm', ['install', '--no-package-lock', '--omit=dev', ...specs], { cwd: app, stdio: 'pipe', env });
  const modules = join(app, 'node_modules');
  const mb = Number(execFileSync('du', ['-sk', modules], { encoding: 'utf8' }).split('\t')[0]) / 1024;
  const typesNode = existsSync(join(modules, '@types', 'node'));
  rows.push({ label, packages: countPackages(modules), mb, typesNode });
  console.log(`${label}: ${countPackages(modules)} packages, ${mb.toFixed(1)} MB${typesNode ? ', @types/node installed' : ''}`);
}

measure('@resourcery/core', [tarball('core')]);
measure('@resourcery/core + @resourcery/node', [tarball('core'), tarball('node')]);
measure('@resourcery/core + exceljs (Excel output)', [tarball('core'), 'exceljs@4.4.0']);
measure('@resourcery/cli (with core, node, sql, pg, exceljs)', [tarball('core'), tarball('node'), tarball('sql'), tarball('cli')]);

console.log(`\n| install | packages | size on disk | @types/node |\n|---|---:|---:|---|`);
for (const r of rows) console.log(`| ${r.label} | ${r.packages} | ${r.mb.toFixed(1)} MB | ${r.typesNode ? 'yes' : 'no'} |`);
rmSync(work, { recursive: true, force: true });
