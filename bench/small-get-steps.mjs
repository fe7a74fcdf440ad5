// Where a small GET's time goes inside a busy server (docs/performance.md, "Small GET: the
// JSON text of an entity state"): a copy of this build with the clock read between the
// pipeline's steps, served under the bench's load, and bare node:http timed the same way
// (its handler, then writeHead + end). Each figure is µs a request, one per run.
//   pnpm run build && node bench/small-get-steps.mjs [--runs=3] [--seconds=3]
// The copy goes to a temporary directory; a pattern that no longer matches the build
// (a step renamed) stops the script with its name.
import { fork } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeDataFile } from './lib/data.mjs';
import { pin, pinning, startLoadGenerator } from './lib/http.mjs';
import { bareBody, bareHeaders, SMALL_PATH } from './servers/small.mjs';
import { arg } from './lib/stats.mjs';

const PACKAGES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'packages');
/** Slot 0 counts requests; slot k the µs spent before probe k since the one before it. */
const STEPS = [
  'RequestContext, root check, authentication',
  'parseUri',
  'resolve, rights, row rules, query, Accept, Operating',
  'the operation',
  'checkRead',
  'respond',
  'the bridge, to writeHead',
  'writeHead + end',
];

/** The probe at step k: the time since the last probe is added to slot k. */
const probe = (k) => `{ const t = performance.now(); globalThis.__steps[${k}] += t - globalThis.__last; globalThis.__last = t; }`;

/** Copies core and node's builds to DIR with probes between the steps. */
function probedCopy(dir) {
  for (const pkg of ['core', 'node']) cpSync(path.join(PACKAGES, pkg, 'dist'), path.join(dir, pkg, 'dist'), { recursive: true });
  symlinkSync(path.join(PACKAGES, 'core', 'node_modules'), path.join(dir, 'core', 'node_modules'));
  const core = path.join(dir, 'core', 'dist', 'index.js');
  let text = readFileSync(core, 'utf8');
  /** `code` after the one match of `pattern` (a function: the match replaced by what it gives). */
  const at = (name, pattern, code) => {
    const matches = text.match(new RegExp(pattern.source, 'g'));
    if (matches?.length !== 1) throw new Error(`small-get-steps: the step '${name}' is not found once in the build (${pattern})`);
    text = text.replace(pattern, typeof code === 'function' ? code : (m) => m + code);
  };
  at('answer', /function answer\d*\(host, request, depth = 0, context, origin, trace\) \{\n/, 'globalThis.__last = performance.now();\n');
  at('authenticated', /function authenticated\d*\(host, ctx, principal\) \{\n/, `${probe(1)}\n`);
  at('run', /function run\d*\(host, ctx, parsed\) \{\n/, `${probe(2)}\n`);
  at('operate', /function operate\d*\(host, ctx, resource, output, operation\d*, operating\) \{\n/, `${probe(3)}\n`);
  at('finish', /function finish\d*\(host, ctx, resource, output, result\) \{\n/, `${probe(4)}\n`);
  at('respond', /function respond\d*\(ctx, resource, output, result\) \{\n/, `${probe(5)}\ntry {\n`);
  // respond's body ends at the class that follows it (request/respond.ts): its end is probe 6.
  at('respond end', /\n}\nvar Writing\d* = class \{/, (m) => `\n} finally { ${probe(6)} }${m}`);
  writeFileSync(core, `globalThis.__steps = new Float64Array(${STEPS.length + 1}); globalThis.__last = 0;\n${text}`);
  for (const file of readdirSync(path.join(dir, 'node', 'dist')).filter((f) => f.endsWith('.js'))) {
    const full = path.join(dir, 'node', 'dist', file);
    let js = readFileSync(full, 'utf8').replaceAll(/from ['"]@resourcery\/core['"]/g, `from ${JSON.stringify(core)}`);
    if (js.includes('function writeWhole(res, response) {\n'))
      js = js.replace(
        'function writeWhole(res, response) {\n',
        `function writeWhole(res, response) {\n  ${probe(7)}\n  try { return writeWhole_(res, response); } finally { ${probe(8)} globalThis.__steps[0]++; }\n}\nfunction writeWhole_(res, response) {\n`,
      );
    writeFileSync(full, js);
  }
}

/** The server (a child of this script): the probed build, or bare node:http with its own clock reads. */
async function serve(mode, data, dir) {
  const { Person } = JSON.parse(readFileSync(data, 'utf8'));
  let server;
  if (mode === 'bare') {
    const steps = (globalThis.__steps = new Float64Array(3));
    server = http.createServer((req, res) => {
      const started = performance.now();
      if (req.method !== 'GET' || req.url !== SMALL_PATH) return void res.writeHead(404).end();
      const body = bareBody(Person, started);
      const handled = performance.now();
      res.writeHead(200, bareHeaders(body));
      res.end(body);
      steps[1] += handled - started;
      steps[2] += performance.now() - handled;
      steps[0]++;
    });
  } else {
    const core = await import(path.join(dir, 'core', 'dist', 'index.js'));
    const node = await import(path.join(dir, 'node', 'dist', 'index.js'));
    const service = core.createService();
    service.addResource({ name: 'Person', storage: new core.MemoryStorage(Person) });
    server = node.createServer(service);
  }
  process.on('message', () => {
    const s = globalThis.__steps;
    process.send(Array.from(s.subarray(1), (t) => (t / s[0]) * 1000));
    s.fill(0);
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

async function stepsOf(mode, data, dir, load, { runs, seconds }) {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', mode, data, dir ?? ''], { stdio: 'inherit' });
  try {
    const { port } = await new Promise((resolve) => child.once('message', resolve));
    const cpus = pinning();
    if (cpus) {
      pin(load.pid, cpus.load);
      pin(child.pid, cpus.servers);
    }
    const session = (duration) =>
      load.run({ url: `http://127.0.0.1:${port}`, duration, connections: 10, requests: [{ method: 'GET', path: SMALL_PATH }] });
    const stats = () => new Promise((resolve) => (child.once('message', resolve), child.send('stats')));
    await session(seconds);
    await stats();
    const out = [];
    for (let i = 0; i < runs; i++) {
      await session(seconds);
      out.push(await stats());
    }
    return out;
  } finally {
    child.kill();
  }
}

function range(xs) {
  const [low, high] = [Math.min(...xs).toFixed(2), Math.max(...xs).toFixed(2)];
  return low === high ? low : `${low}-${high}`;
}

if (process.argv[2] === '--serve') await serve(process.argv[3], process.argv[4], process.argv[5]);
else {
  const options = { runs: arg('runs', 3), seconds: arg('seconds', 3) };
  const data = writeDataFile('people-50.json', 50);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'resourcery-steps-'));
  const load = await startLoadGenerator();
  try {
    probedCopy(dir);
    const lib = await stepsOf('library', data, dir, load, options);
    const bare = await stepsOf('bare', data, undefined, load, options);
    console.log(
      `small GET ${SMALL_PATH} over 50 entities, µs a request in each of ${options.runs} runs of ${options.seconds} s (load ${os.loadavg()[0].toFixed(1)})`,
    );
    console.log('| step | node adapter |\n|---|---:|');
    STEPS.forEach((name, k) => console.log(`| ${name} | ${range(lib.map((r) => r[k]))} |`));
    console.log(`| the library's steps in all (to writeHead) | ${range(lib.map((r) => r.slice(0, 7).reduce((a, b) => a + b, 0)))} |`);
    console.log(`| bare node:http: its handler | ${range(bare.map((r) => r[0]))} |`);
    console.log(`| bare node:http: writeHead + end | ${range(bare.map((r) => r[1]))} |`);
  } finally {
    await load.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
