#!/usr/bin/env node
// `pnpm start`: serves a working copy of examples/data/people.json (in .data/, which git
// ignores), so trying out POST/PATCH/DELETE never changes the tracked example file.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { spawn } from 'node:child_process';

const file = '.data/people.json';
if (!existsSync(file)) {
  mkdirSync('.data', { recursive: true });
  copyFileSync('examples/data/people.json', file);
}
const args = ['packages/cli/dist/cli.js', 'serve', file, '--port', '8080', ...process.argv.slice(2)];
const child = spawn(process.execPath, args, { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 0));
