// The small GET (`/Person/id=7` over 50 entities) through the node adapter's listener and
// bare node:http's listener (bench/servers/node-small.mjs), each on a request and response
// without a socket, in one process: "hot" calls one after another, "cold" calls each after
// touching --mib MiB of other memory, which pushes the listener's code and data out of the
// CPU's caches as the other processes of a busy machine do between two HTTP requests. The
// adapter's extra time a request is ~0.3-1 µs hot but ~2-6 µs cold, which is about the gap
// the HTTP row shows (docs/performance.md, "Small GET: fewer steps (issue 30)"). Wall time of
// each call (performance.now around it, the flush outside), the interquartile mean of a
// round, the median of rounds in turns; --before=DIR adds the listener of another build
// (DIR holds core/dist and node/dist, node's import of @resourcery/core pointed at DIR's core).
//   node bench/small-get-cold.mjs [--quick] [--json] [--mib=8] [--before=DIR]
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createService, MemoryStorage } from '@resourcery/core';
import { createNodeListener } from '@resourcery/node';
import { people } from './lib/data.mjs';
import { BARE_ETAG, envelope, SMALL_PATH } from './servers/small.mjs';
import { arg, flags, fmt, median } from './lib/stats.mjs';

/** What autocannon sends, as node:http receives it: req.headers is built from these when read. */
const RAW_HEADERS = ['Host', '127.0.0.1:3000', 'Connection', 'keep-alive', 'User-Agent', 'autocannon', 'Accept', '*/*'];

function adapterOf(core, node, Person) {
  const service = core.createService();
  service.addResource({ name: 'Person', storage: new core.MemoryStorage(Person.map((p) => ({ ...p }))) });
  return node.createNodeListener(service);
}

export async function run({ quick = false, mib = 8, before = undefined } = {}) {
  const Person = JSON.parse(JSON.stringify(people(50)));
  const listeners = {
    bare: (req, res) => {
      const started = performance.now();
      if (req.method !== 'GET' || req.url !== SMALL_PATH) return void res.writeHead(404).end();
      const data = Person.filter((p) => p.id === 7);
      const body = JSON.stringify(envelope(data, started));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), etag: BARE_ETAG });
      res.end(body);
    },
    adapter: adapterOf({ createService, MemoryStorage }, { createNodeListener }, Person),
  };
  if (before !== undefined) {
    const dir = path.resolve(before);
    const core = await import(path.join(dir, 'core', 'dist', 'index.js'));
    const node = await import(path.join(dir, 'node', 'dist', 'index.js'));
    listeners.before = adapterOf(core, node, Person);
  }
  const junk = new Int32Array((mib * 1024 * 1024) / 4);
  let sink = 0;
  // One read and write a 64-byte line: every line of the buffer ends up in the caches.
  const flush = () => {
    for (let i = 0; i < junk.length; i += 16) sink += junk[i]++;
  };
  const exchange = () => {
    const req = new http.IncomingMessage(null);
    Object.assign(req, { method: 'GET', url: SMALL_PATH, rawHeaders: RAW_HEADERS.slice(), httpVersionMajor: 1, httpVersionMinor: 1 });
    return [req, new http.ServerResponse(req)];
  };
  const round = (listener, n, cold) => {
    const times = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (cold) flush();
      const [req, res] = exchange();
      const t0 = performance.now();
      listener(req, res);
      times[i] = performance.now() - t0;
    }
    times.sort();
    let sum = 0;
    const lo = n >> 2;
    const hi = n - lo;
    for (let i = lo; i < hi; i++) sum += times[i];
    return (sum / (hi - lo)) * 1000;
  };
  const names = Object.keys(listeners);
  for (const name of names) round(listeners[name], 20_000, false);
  const rounds = quick ? 4 : 8;
  const us = Object.fromEntries(names.map((n) => [n, { hot: [], cold: [] }]));
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 ? [...names].reverse() : names) {
      us[name].hot.push(round(listeners[name], quick ? 2000 : 4000, false));
      us[name].cold.push(round(listeners[name], quick ? 600 : 1200, true));
    }
  }
  if (sink === 0.5) console.log('');
  const out = { mib, rounds, load: os.loadavg()[0], raw: us };
  for (const name of names) out[name] = { hotUs: median(us[name].hot), coldUs: median(us[name].cold) };
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const before = process.argv.find((a) => a.startsWith('--before='))?.slice(9);
  const r = await run({ ...opts, mib: arg('mib', 8), before });
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    const line = (name) => `${name} ${fmt(r[name].hotUs)} hot, ${fmt(r[name].coldUs)} cold`;
    const shown = ['adapter', ...(r.before ? ['before'] : []), 'bare'].map(line).join('; ');
    console.log(
      `small GET listener, µs a call (median of ${r.rounds} rounds, ${r.mib} MiB flushed before each cold call, load ${r.load.toFixed(1)}): ${shown}`,
    );
  }
}
