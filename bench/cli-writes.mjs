// CLI writes by data-file size (issue 15 item 3, issue 17): for each size, serve a JSON
// file of N entities with the built CLI, run concurrent POSTs for a few seconds while a
// reader GETs `/items/limit=1` (a cheap request) in a loop, and report writes/s and the worst GET latency.
// Then the writers stop and the reader goes on while the server writes its journal into
// the file (compaction): the worst GET latency during that compaction, and how long it took.
//   pnpm build && node bench/cli-writes.mjs [--sizes=1000,10000,100000,1000000] [--seconds=4] [--writers=8] [--cli=path/to/cli.js]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const SIZES = arg('sizes', '1000,10000,100000,1000000').split(',').map(Number);
const SECONDS = Number(arg('seconds', '4'));
const WRITERS = Number(arg('writers', '8'));
const CLI = path.resolve(arg('cli', path.join(path.dirname(fileURLToPath(import.meta.url)), '../packages/cli/dist/cli.js')));
const HEADERS = { 'content-type': 'application/json', accept: 'application/json;raw=true' };

function start(file) {
  const child = spawn(process.execPath, [CLI, 'serve', file, '--port', '0', '-q'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) resolve({ child, url: m[0] });
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
}

async function measure(size, dir) {
  const file = path.join(dir, `data-${size}.json`);
  const items = Array.from({ length: size }, (_, i) => ({ id: i, name: `item ${i}`, price: i % 1000 }));
  await writeFile(file, JSON.stringify({ items }));
  const { child, url } = await start(file);
  try {
    const end = Date.now() + SECONDS * 1000;
    let writes = 0;
    let worstWrite = 0;
    let worstGet = 0;
    let gets = 0;
    let next = size;
    const writer = async () => {
      while (Date.now() < end) {
        const t = performance.now();
        const r = await fetch(`${url}/items`, {
          method: 'POST',
          headers: HEADERS,
          body: JSON.stringify({ id: next++, name: 'new', price: 1 }),
        });
        await r.text();
        if (r.status !== 201) throw new Error(`POST answered ${r.status}`);
        worstWrite = Math.max(worstWrite, performance.now() - t);
        writes++;
      }
    };
    const reader = async () => {
      while (Date.now() < end) {
        const t = performance.now();
        const r = await fetch(`${url}/items/limit=1`, { headers: HEADERS });
        await r.text();
        worstGet = Math.max(worstGet, performance.now() - t);
        gets++;
      }
    };
    const t0 = performance.now();
    await Promise.all([...Array.from({ length: WRITERS }, writer), reader()]);
    const seconds = (performance.now() - t0) / 1000;
    // The journal is written into the file once writes pause: GETs go on meanwhile.
    const journal = `${file}.journal`;
    let worstDuring = 0;
    let compactMs = null;
    if (existsSync(journal)) {
      const t1 = performance.now();
      const limit = t1 + 120_000;
      while (existsSync(journal) && performance.now() < limit) {
        const t = performance.now();
        const r = await fetch(`${url}/items/limit=1`, { headers: HEADERS });
        await r.text();
        worstDuring = Math.max(worstDuring, performance.now() - t);
      }
      if (!existsSync(journal)) compactMs = performance.now() - t1;
    }
    return { size, writesPerSecond: writes / seconds, worstWriteMs: worstWrite, worstGetMs: worstGet, gets, worstDuring, compactMs };
  } finally {
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  }
}

const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-cli-writes-'));
try {
  console.log(
    `| entities | writes/s (${WRITERS} writers) | worst write ms | worst GET ms during writes | worst GET ms during compaction | pause + compaction ms |`,
  );
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const size of SIZES) {
    const r = await measure(size, dir);
    console.log(
      `| ${size.toLocaleString('en')} | ${r.writesPerSecond.toFixed(1)} | ${r.worstWriteMs.toFixed(0)} | ${r.worstGetMs.toFixed(0)} | ${r.compactMs === null ? '-' : r.worstDuring.toFixed(0)} | ${r.compactMs === null ? '-' : r.compactMs.toFixed(0)} |`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
