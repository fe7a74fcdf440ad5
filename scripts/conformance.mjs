#!/usr/bin/env node
// Runs the shared conformance kit (../shared/conformance) against the CLI, and against
// the Express- and Koa-mounted services where their conformance servers exist.
// Only the case files whose features exist are listed; widen the list as issues land.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const kit = path.resolve('..', 'shared', 'conformance');
if (!existsSync(path.join(kit, 'run.mjs'))) {
  console.log('conformance kit not found beside the project: skipped');
  process.exit(0);
}
const CASES = ['01-uri-conditions', '02-meta-conditions', '03-methods', '04-errors', '05-macros', '06-protocols', '07-auth', '08-webhooks'];
const files = CASES.map((c) => path.join(kit, 'cases', `${c}.json`));
const servers = [
  null,
  ...['express', 'koa', 'fastify']
    .map((a) => `examples/${a}/conformance-server.mjs`)
    .filter((s) => existsSync(s))
    .map((s) => `node ${s} {data} --port 0 {args}`),
];
let passed = 0;
let failed = 0;
for (const server of servers) {
  const args = [path.join(kit, 'run.mjs'), ...(server ? ['--server', server] : []), ...files];
  const run = spawnSync('node', args, { encoding: 'utf8' });
  process.stdout.write(
    run.stdout
      .split('\n')
      .filter((l) => !l.startsWith('conformance:'))
      .join('\n'),
  );
  process.stderr.write(run.stderr);
  const m = /conformance: (\d+) passed, (\d+) failed/.exec(run.stdout);
  if (!m) failed++;
  else {
    passed += Number(m[1]);
    failed += Number(m[2]);
  }
  console.log(`[${server ?? 'cli'}] ${m ? m[0] : 'did not finish'}`);
}
console.log(`conformance: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
