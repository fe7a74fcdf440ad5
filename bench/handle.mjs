// The small GET (`/Person/id=7` over 50 entities) without HTTP: CPU time per request of
// `service.handle`, and of `service.answer` (what the adapters call: the answer at once,
// no promise), against a bare handler producing the same bytes, in one process, in
// rounds alternating A B B A (answer runs beside each A). Steadier than the HTTP rows on a
// loaded machine: it counts this process's CPU time (process.cpuUsage), not requests per
// wall-clock second. Then the node adapter's listener against bare node:http's listener
// (bench/servers/node-small.mjs) on a request and response without a socket, `writeHead`
// and `end` included: the adapter's extra CPU per request, without the network.
//   node bench/handle.mjs [--quick] [--json]
import http from 'node:http';
import { createService, MemoryStorage } from '@resourcery/core';
import { createNodeListener } from '@resourcery/node';
import { people } from './lib/data.mjs';
import { BARE_ETAG, envelope, SMALL_PATH } from './servers/small.mjs';
import { flags, fmt, median } from './lib/stats.mjs';

/** What node:http hands a listener: lower-case names, string values. */
const HEADERS = { host: '127.0.0.1:3000', connection: 'keep-alive', 'user-agent': 'autocannon', accept: '*/*' };

const strip = (s) => s.replace(/"TimeElapsedMs":[-+0-9.eE]+/, '');

/** Awaits only a promise: an answer given at once is used at once, as the adapters do. */
async function cpuPerCall(fn, n) {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const r = fn();
    if (r instanceof Promise) await r;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

export async function run({ quick = false } = {}) {
  const Person = JSON.parse(JSON.stringify(people(50)));
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage(Person) });
  const library = () => service.handle({ method: 'GET', uri: SMALL_PATH, headers: { ...HEADERS }, body: null, basePath: '' });
  const answer = () => service.answer({ method: 'GET', uri: SMALL_PATH, headers: { ...HEADERS }, body: null, basePath: '' });
  // As bench/servers/node-small.mjs's bare handler; async, as a handler awaiting anything is.
  const bare = async () => {
    const started = performance.now();
    const data = Person.filter((p) => p.id === 7);
    return { status: 200, body: JSON.stringify(envelope(data, started)) };
  };
  const a = await library();
  const b = await bare();
  const now = answer();
  if (now instanceof Promise || strip(now.body) !== strip(a.body))
    throw new Error('handle bench: service.answer did not answer at once, or otherwise');
  if (strip(a.body) !== strip(b.body)) throw new Error(`handle bench: bodies differ\n${a.body}\n${b.body}`);

  const n = quick ? 10_000 : 20_000;
  const rounds = quick ? 6 : 12;
  await cpuPerCall(library, n * 2);
  await cpuPerCall(bare, n * 2);
  await cpuPerCall(answer, n * 2);
  const us = { library: [], answer: [], bare: [] };
  const fns = { library, answer, bare };
  for (let r = 0; r < rounds; r++) {
    for (const k of r % 2 ? ['bare', 'answer', 'library'] : ['library', 'answer', 'bare']) us[k].push(await cpuPerCall(fns[k], n));
  }
  const listeners = listenerRounds(service, Person, quick ? 5_000 : 10_000, rounds);
  return { libraryUs: median(us.library), answerUs: median(us.answer), bareUs: median(us.bare), rounds, raw: us, listeners };
}

/** CPU µs per request of the adapter's and a bare listener, each making its own request and response (a new pair per call). */
function listenerRounds(service, Person, n, rounds) {
  const adapter = createNodeListener(service);
  const bare = (req, res) => {
    const started = performance.now();
    const data = Person.filter((p) => p.id === 7);
    const body = JSON.stringify(envelope(data, started));
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), etag: BARE_ETAG });
    res.end(body);
  };
  const exchange = () => {
    const req = new http.IncomingMessage(null);
    Object.assign(req, { method: 'GET', url: SMALL_PATH, headers: { ...HEADERS }, httpVersionMajor: 1, httpVersionMinor: 1 });
    return [req, new http.ServerResponse(req)];
  };
  const cpu = (listener, count) => {
    const start = process.cpuUsage();
    for (let i = 0; i < count; i++) listener(...exchange());
    const used = process.cpuUsage(start);
    return (used.user + used.system) / count;
  };
  const sent = (listener) => {
    const [req, res] = exchange();
    let body = '';
    const end = res.end;
    res.end = (chunk) => ((body = String(chunk)), end.call(res, chunk));
    listener(req, res);
    return `${res.statusCode} ${strip(body)}`;
  };
  if (sent(adapter) !== sent(bare)) throw new Error(`handle bench: the listeners answer differently\n${sent(adapter)}\n${sent(bare)}`);
  cpu(adapter, n * 2);
  cpu(bare, n * 2);
  const us = { adapter: [], bare: [] };
  for (let r = 0; r < rounds; r++) {
    for (const k of r % 2 ? ['bare', 'adapter'] : ['adapter', 'bare']) us[k].push(cpu(k === 'adapter' ? adapter : bare, n));
  }
  return { adapterUs: median(us.adapter), bareUs: median(us.bare), raw: us };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else
    console.log(
      `small GET, CPU µs per request (median of ${r.rounds} rounds): service.handle ${fmt(r.libraryUs)}, service.answer ${fmt(r.answerUs)}, bare handler ${fmt(r.bareUs)}; ` +
        `node listeners without a socket: adapter ${fmt(r.listeners.adapterUs)}, bare node:http ${fmt(r.listeners.bareUs)}`,
    );
}
