// Bytes per entity held by an in-memory resource, against the raw objects alone: the
// same entities parsed from JSON text, measured on the V8 heap after a full collection.
//   node --expose-gc bench/memory.mjs [--json] [--count=1000000]
// (re-runs itself with --expose-gc when started without it)
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createService, MemoryStorage } from '@resourcery/core';
import { people } from './lib/data.mjs';
import { flags, fmt, table } from './lib/stats.mjs';

const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);

function heap() {
  // Several collections: weak references and finalization settle over more than one.
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage().heapUsed;
}

/**
 * The entities parsed from JSON text, as a file is loaded. A function of its own, so
 * that no register of the caller's frame still holds the text or the generated objects.
 */
function load(count) {
  return JSON.parse(JSON.stringify(people(count)));
}

async function ask(service, uri, method = 'GET', body) {
  const res = await service.handle({
    method,
    uri,
    headers: { accept: 'application/json;raw=true', ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`memory bench: ${method} ${uri} answered ${res.status}`);
}

export async function run({ count = 1_000_000 } = {}) {
  const empty = heap();
  const raw = load(count);
  const rawHeap = heap();
  const perRaw = (rawHeap - empty) / count;
  const steps = [];
  const step = (name) => {
    const used = heap() - empty;
    steps.push({ name, bytesPerEntity: used / count, ratio: used / count / perRaw });
  };

  const service = createService({ searchBudget: Number.MAX_SAFE_INTEGER });
  service.addResource({ name: 'Person', storage: new MemoryStorage(raw) });
  step('resource created (MemoryStorage over the parsed objects)');
  for (const uri of [
    '/Person/Age>30&Email!=null/order_desc=Age&limit=10&select=Name,Age',
    '/Person/id=7',
    '/Person/_/select=City&distinct=true',
    '/Person/_/offset=999990',
  ]) {
    await ask(service, uri);
  }
  step('after queries (conditions, order, distinct, paging)');
  await ask(service, '/Person/id=7', 'PATCH', { Name: 'Changed' });
  await ask(service, '/Person', 'POST', { id: count + 1, Name: 'New', Age: 40, Email: null, City: 'Boston', Active: true });
  step('after an update and an insert');
  for (let i = 0; i < 3; i++) await ask(service, '/Person/_/search=99999%40');
  step('after searches over every entity');
  return { entities: count, rawBytesPerEntity: perRaw, steps, node: process.version };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (typeof globalThis.gc !== 'function') {
    const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
    process.stdout.write(out);
  } else {
    const opts = flags();
    const r = await run({ count: arg('count', 1_000_000) });
    if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
    else {
      console.log(
        `${r.entities.toLocaleString('en-US')} entities; raw objects: ${fmt(r.rawBytesPerEntity)} bytes each (V8 heap, ${r.node})`,
      );
      console.log(
        table(
          ['state', 'bytes per entity', 'vs raw objects'],
          r.steps.map((s) => [s.name, fmt(s.bytesPerEntity), `${s.ratio.toFixed(2)}x`]),
        ),
      );
    }
  }
}
