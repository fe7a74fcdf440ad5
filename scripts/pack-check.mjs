#!/usr/bin/env node
// Packs every package as it would be published, installs the tarballs with npm into a
// fresh app outside the workspace (engine-strict, on this Node), and runs what an app
// author would: an ESM app, a CommonJS app, strict `tsc --noEmit` with and without
// esModuleInterop, and a node:test unit test through service.handle.
// Run after `pnpm build`: `node scripts/pack-check.mjs` (CI runs it). Ends with one line:
// `pack-check: N of N checks ok` (worded so it is not taken for the test suite's count).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'resourcery-pack-'));
const tarballs = join(work, 'tarballs');
const app = join(work, 'app');
mkdirSync(tarballs);
mkdirSync(app);

const packages = readdirSync(join(root, 'packages'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => JSON.parse(readFileSync(join(root, 'packages', d.name, 'package.json'), 'utf8')))
  .filter((p) => !p.private);

const results = [];
function check(name, fn) {
  try {
    fn();
    results.push([name, true]);
    console.log(`ok   ${name}`);
  } catch (e) {
    results.push([name, false]);
    console.log(`FAIL ${name}\n${e.stdout ?? ''}${e.stderr ?? ''}${e.stdout || e.stderr ? '' : e.message}`);
  }
}
const run = (cmd, args, cwd = app) =>
  execFileSync(cmd, args, {
    cwd,
    stdio: 'pipe',
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' },
  });

check(`pnpm pack (${packages.length} packages), no workspace: ranges left`, () => {
  // Under `pnpm run`, npm_execpath is pnpm itself: works even where pnpm is not on PATH (npx).
  const pnpm = /pnpm/.test(process.env.npm_execpath ?? '') ? [process.execPath, process.env.npm_execpath] : ['pnpm'];
  for (const p of packages)
    run(pnpm[0], [...pnpm.slice(1), 'pack', '--pack-destination', tarballs], join(root, 'packages', p.name.replace('@resourcery/', '')));
  for (const file of readdirSync(tarballs)) {
    const manifest = run('tar', ['-xOzf', join(tarballs, file), 'package/package.json'], tarballs);
    if (manifest.includes('workspace:')) throw new Error(`${file} still has a workspace: range`);
    const listing = run('tar', ['-tzf', join(tarballs, file)], tarballs);
    if (!listing.includes('package/LICENSE')) throw new Error(`${file} has no LICENSE`);
  }
});

writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, version: '1.0.0' }, null, 2));
check('npm install --engine-strict of the tarballs (+ typescript, @types/node 20, express, koa, fastify)', () => {
  const files = readdirSync(tarballs).map((f) => join(tarballs, f));
  run('npm', [
    'install',
    '--engine-strict',
    '--no-package-lock',
    ...files,
    'typescript@5.9.3',
    '@types/node@20',
    'express@5',
    '@types/express@5',
    'koa@3',
    '@types/koa@3',
    'fastify@5',
    // light-my-request 6.8 (Fastify 5's inject) needs cookie 2, whose engines ask for Node 22:
    // under --engine-strict on Node 20 an app pins 6.6 (docs/adapters/fastify.md).
    'light-my-request@6.6.0',
  ]);
});

const service = `service.addResource({ name: 'Person' });
await service.handle({ method: 'POST', uri: '/Person', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ Name: 'Ada', Age: 36 }, { Name: 'Alan', Age: 41 }]) });`;
const serveAndGet = `const server = createServer(service).listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const res = await fetch('http://127.0.0.1:' + server.address().port + '/Person/Age>40/select=Name', { headers: { accept: 'application/json;raw=true' } });
const text = await res.text();
server.close();
if (text !== '[{"Name":"Alan"}]') throw new Error('unexpected answer ' + text);
console.log('served', text);`;

check('ESM app (import) serving over node:http, with Express and Koa middleware loaded, and the Fastify plugin answering', () => {
  writeFileSync(
    join(app, 'esm.mjs'),
    `import { createService } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { createExpressMiddleware } from '@resourcery/express';
import { createKoaMiddleware } from '@resourcery/koa';
import { resourceryFastify } from '@resourcery/fastify';
import express from 'express';
import Koa from 'koa';
import Fastify from 'fastify';
const service = createService();
${service}
express().use('/api', createExpressMiddleware(service));
new Koa().use(createKoaMiddleware(service));
const fastifyApp = Fastify();
await fastifyApp.register(resourceryFastify, { service, prefix: '/api' });
const viaFastify = await fastifyApp.inject({ method: 'REPORT', url: '/api/Person', headers: { accept: 'application/json;raw=true' } });
if (viaFastify.body !== '2') throw new Error('Fastify plugin answered ' + viaFastify.statusCode + ' ' + viaFastify.body);
await fastifyApp.close();
${serveAndGet}
`,
  );
  run(process.execPath, ['esm.mjs']);
});

check('@resourcery/opentelemetry with @opentelemetry/api alone (no SDK installed): requests answered, spans no-ops', () => {
  const otel = readdirSync(join(app, 'node_modules', '@opentelemetry'));
  if (otel.join() !== 'api') throw new Error(`node_modules/@opentelemetry holds ${otel.join(', ')}, not the API alone`);
  writeFileSync(
    join(app, 'otel.mjs'),
    `import { createService } from '@resourcery/core';
import { traceRequests } from '@resourcery/opentelemetry';
const service = createService();
${service}
const stop = traceRequests(service);
const res = await service.fetch(new Request('http://x/Person/Age>40/select=Name', { headers: { accept: 'application/json;raw=true' } }));
if ((await res.text()) !== '[{"Name":"Alan"}]') throw new Error('unexpected answer under tracing');
stop();
`,
  );
  run(process.execPath, ['otel.mjs']);
});

check('Excel written where exceljs is installed (the CLI depends on it)', () => {
  writeFileSync(
    join(app, 'excel.mjs'),
    `import { createService } from '@resourcery/core';
const service = createService();
${service}
const res = await service.fetch(new Request('http://x/Person', { headers: { accept: 'excel' } }));
const bytes = new Uint8Array(await res.arrayBuffer());
if (res.status !== 200 || bytes[0] !== 0x50 || bytes[1] !== 0x4b) throw new Error('Excel answered ' + res.status);
`,
  );
  run(process.execPath, ['excel.mjs']);
});

check('CommonJS app (require) serving over node:http', () => {
  writeFileSync(
    join(app, 'cjs.cjs'),
    `const { createService } = require('@resourcery/core');
const { createServer } = require('@resourcery/node');
require('@resourcery/express');
require('@resourcery/koa');
require('@resourcery/fastify');
(async () => {
const service = createService();
${service}
${serveAndGet}
})().catch((e) => { console.error(e); process.exit(1); });
`,
  );
  run(process.execPath, ['cjs.cjs']);
});

const typed = `import { createMetrics, createService, ServiceError, type PlainResponse } from '@resourcery/core';
import { createServer, createNodeListener } from '@resourcery/node';
import { createExpressMiddleware } from '@resourcery/express';
import { createKoaMiddleware } from '@resourcery/koa';
import { traceRequests } from '@resourcery/opentelemetry';
const service = createService({ maxBodyBytes: 1024 });
service.addResource({ name: 'Person', schema: { type: 'object', properties: { Name: { type: 'string' } } } });
const answer: Promise<PlainResponse> = service.handle({ method: 'GET', uri: '/Person' });
const server = createServer(service);
const listener = createNodeListener(service);
const mw = createExpressMiddleware(service);
const kmw = createKoaMiddleware(service);
const e: ServiceError = new ServiceError('NotAcceptable', 'x');
const unsubscribe: () => void = service.subscribe(() => undefined);
const idle: Promise<void> = service.idle();
const stopTracing: () => void = traceRequests(service);
const metrics: Promise<string> = createMetrics(service).text();
// The service's parts are not public API: the published types leave them out (@internal).
// @ts-expect-error -- not in the published types
const parts = [service.resources, service.webhooks, service.events, service.macros, service.errors];
export { answer, server, listener, mw, kmw, e, unsubscribe, idle, parts, stopTracing, metrics };
`;
writeFileSync(join(app, 'typed.ts'), typed);
// Fastify's own types (pino's) need esModuleInterop once skipLibCheck is false: checked there only.
writeFileSync(
  join(app, 'fastify.ts'),
  `import Fastify from 'fastify';
import { createService } from '@resourcery/core';
import { resourceryFastify } from '@resourcery/fastify';
export const registered = Fastify().register(resourceryFastify, { service: createService(), prefix: '/api', context: (request) => ({ id: request.id }) });
`,
);
for (const [module, moduleResolution] of [
  ['nodenext', 'nodenext'],
  ['commonjs', 'node10'],
]) {
  for (const interop of [false, true]) {
    check(`strict tsc --noEmit, module ${module}, esModuleInterop ${interop}${interop ? ' (+ Fastify)' : ''}, skipLibCheck false`, () => {
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            module,
            moduleResolution,
            target: 'es2022',
            esModuleInterop: interop,
            allowSyntheticDefaultImports: interop,
            skipLibCheck: false,
            types: ['node'],
          },
          files: interop ? ['typed.ts', 'fastify.ts'] : ['typed.ts'],
        }),
      );
      run(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json']);
    });
  }
}

check('node:test unit test through service.handle (no server)', () => {
  writeFileSync(
    join(app, 'person.test.mjs'),
    `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createService } from '@resourcery/core';
test('a resource answers without HTTP', async () => {
  const service = createService();
  ${service}
  const res = await service.handle({ method: 'GET', uri: '/Person/Age>40', headers: { accept: 'application/json;raw=true' } });
  assert.equal(res.status, 200);
  assert.deepEqual(JSON.parse(res.body), [{ Name: 'Alan', Age: 41 }]);
});
`,
  );
  const r = spawnSync(process.execPath, ['--test', 'person.test.mjs'], { cwd: app, encoding: 'utf8' });
  if (r.status !== 0 || !/# pass 1/.test(r.stdout))
    throw Object.assign(new Error('node --test failed'), { stdout: r.stdout, stderr: r.stderr });
});

// An app that uses the core alone, as a fetch-runtime app (Hono, Next.js, Bun, Deno) would:
// no exceljs (an optional peer, docs/install.md#excel-output) and no @types/node of its own.
const lean = join(work, 'lean');
mkdirSync(lean);
writeFileSync(join(lean, 'package.json'), JSON.stringify({ name: 'lean-app', private: true, version: '1.0.0', type: 'module' }, null, 2));
check('npm install of @resourcery/core alone (+ typescript): no exceljs, no @opentelemetry, no @types/node in node_modules', () => {
  const core = readdirSync(tarballs).find((f) => f.startsWith('resourcery-core-'));
  run('npm', ['install', '--engine-strict', '--no-package-lock', join(tarballs, core), 'typescript@5.9.3'], lean);
  const present = readdirSync(join(lean, 'node_modules'));
  if (present.includes('exceljs')) throw new Error('exceljs was installed with @resourcery/core');
  if (present.includes('@opentelemetry')) throw new Error('@opentelemetry was installed with @resourcery/core');
  if (present.includes('@types'))
    throw new Error(`node_modules/@types holds ${readdirSync(join(lean, 'node_modules', '@types')).join(', ')}`);
});
check('core alone: JSON answers through service.fetch, Excel is 406 naming exceljs', () => {
  writeFileSync(
    join(lean, 'lean.mjs'),
    `import { createService } from '@resourcery/core';
const service = createService();
${service}
const json = await service.fetch(new Request('http://x/Person/Age>40/select=Name', { headers: { accept: 'application/json;raw=true' } }));
if ((await json.text()) !== '[{"Name":"Alan"}]') throw new Error('unexpected JSON answer');
const excel = await service.fetch(new Request('http://x/Person', { headers: { accept: 'excel' } }));
const body = await excel.json();
if (excel.status !== 406 || !/npm install exceljs/.test(body.Message)) throw new Error('Excel without exceljs answered ' + excel.status + ' ' + JSON.stringify(body));
`,
  );
  run(process.execPath, ['lean.mjs'], lean);
});
check('core alone: strict tsc --noEmit, skipLibCheck false, lib es2022 + dom, no @types/node', () => {
  writeFileSync(
    join(lean, 'app.ts'),
    `import { createService, type PlainResponse } from '@resourcery/core';
const service = createService();
service.addResource({ name: 'Person' });
export const handler = (request: Request): Promise<Response> => service.fetch(request, { basePath: '/api', context: { user: 'ann' } });
export const answer: Promise<PlainResponse> = service.handle({ method: 'GET', uri: '/Person' });
`,
  );
  writeFileSync(
    join(lean, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom', 'dom.iterable'],
        skipLibCheck: false,
      },
      files: ['app.ts'],
    }),
  );
  run(process.execPath, [join(lean, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], lean);
});

if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
else console.log(`kept ${work}`);
const failed = results.filter(([, ok]) => !ok).length;
console.log(`pack-check: ${results.length - failed} of ${results.length} checks ok`);
process.exit(failed > 0 ? 1 : 0);
