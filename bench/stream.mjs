// Event streams (Server-Sent Events) fanned out to many subscribers: Resourcery's streams
// through the node adapter against a hand-written SSE broadcaster over bare node:http that
// does the same filtering (docs/events.md, docs/performance.md).
//   node bench/stream.mjs [--quick] [--json] [--subscribers=1000] [--rounds=N]
// Each subject (the service, the bare broadcaster) runs in a child process of its own, and
// the subscribers in another, so no two share an event loop. Half the subscribers select
// `/Tick/Age>=18`, half `/Tick/Team=red`; each event is one entity (Age 10 or 30, Team red
// or blue, taking turns), so every other event reaches each half (`deliveries` counts them).
// Per round and subject:
//   memory: heap + external of the server process after gc, before and after the
//           subscribers connect, divided by their number (an idle subscriber's cost);
//   paced:  events raised at a steady rate well below throughput; p50/p99 delay from
//           `raise` to receipt over every delivery (a latency, not a queue);
//   burst:  events raised as fast as the server takes them (10 per turn of the event loop);
//           events/s = events / (first raise .. last receipt at every subscriber), and the
//           server process's CPU time per event (user + system, less sensitive to other load;
//           the subscribers' process, on the same cores, is often what limits events/s).
// Rounds alternate the subjects; figures are medians of the rounds.
import { fork } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { arg, flags, fmt, median, table } from './lib/stats.mjs';

const SELF = fileURLToPath(import.meta.url);
const wall = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const turn = () => new Promise((r) => setImmediate(r));
const SELECTORS = ['/Tick/Age>=18', '/Tick/Team=red'];

/** Event i's entity (RaisedAt is set when it is raised). */
function entity(i) {
  return { Id: i, Age: i % 2 === 1 ? 30 : 10, Team: (i >> 1) % 2 === 0 ? 'red' : 'blue', RaisedAt: 0 };
}

/** How many deliveries events [from, from + count) make to n subscribers (subscriber s has SELECTORS[s % 2]). */
function deliveries(from, count, n) {
  const byAge = Math.floor(n / 2);
  const byTeam = n - byAge;
  let total = 0;
  for (let i = from; i < from + count; i++) {
    const e = entity(i);
    if (e.Age >= 18) total += byAge;
    if (e.Team === 'red') total += byTeam;
  }
  return total;
}

// ---------- the servers (child processes) ----------

async function resourceryServer() {
  const { createService } = await import('@resourcery/core');
  const { createServer } = await import('@resourcery/node');
  const service = createService({ streams: { maxStreams: 100_000 } });
  service.defineEvent('Tick', {
    schema: {
      type: 'object',
      properties: { Id: { type: 'integer' }, Age: { type: 'integer' }, Team: { type: 'string' }, RaisedAt: { type: 'number' } },
    },
  });
  const server = createServer(service);
  server.keepAliveTimeout = 0;
  return { server, raise: (e) => service.raise('Tick', e), streams: () => service.streams.opened() };
}

/**
 * The baseline: what an app would write by hand. Each subscriber's selector is parsed once
 * (`Prop>=number` or `Prop=value`); an event's JSON is made once when every entity matches.
 */
function bareServer() {
  const subscribers = new Set();
  let seq = 0;
  const server = http.createServer((req, res) => {
    const m = /^\/Tick\/(\w+)(>=|=)(.*)$/.exec(decodeURIComponent(req.url));
    if (req.method !== 'GET' || !m || !(req.headers.accept ?? '').includes('text/event-stream')) return res.writeHead(404).end();
    const [, prop, op, raw] = m;
    const value = op === '>=' ? Number(raw) : raw;
    const test = op === '>=' ? (e) => e[prop] >= value : (e) => e[prop] === value;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform' });
    res.write(': ok\n\n');
    const subscriber = { res, test };
    subscribers.add(subscriber);
    req.on('close', () => subscribers.delete(subscriber));
  });
  server.keepAliveTimeout = 0;
  return {
    server,
    raise(entities) {
      const list = Array.isArray(entities) ? entities : [entities];
      const id = `${++seq}`;
      let whole;
      for (const s of subscribers) {
        const selected = list.filter(s.test);
        if (selected.length === 0) continue;
        const data = selected.length === list.length ? (whole ??= JSON.stringify(list)) : JSON.stringify(selected);
        s.res.write(`id: ${id}\nevent: Tick\ndata: ${data}\n\n`);
      }
    },
    streams: () => subscribers.size,
  };
}

async function serve(kind) {
  const subject = kind === 'resourcery' ? await resourceryServer() : bareServer();
  const memory = () => {
    globalThis.gc();
    globalThis.gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.external, rss: m.rss };
  };
  const raise = async (i) => {
    const e = entity(i);
    e.RaisedAt = wall();
    await subject.raise(e);
  };
  process.on('message', async (m) => {
    if (m.memory) process.send({ memory: memory(), streams: subject.streams() });
    if (m.cpu) {
      const c = process.cpuUsage();
      process.send({ cpu: (c.user + c.system) / 1000 });
    }
    if (m.paced) {
      for (let i = m.paced.from; i < m.paced.from + m.paced.count; i++) {
        await raise(i);
        await sleep(1000 / m.paced.rate);
      }
      process.send({ raised: true });
    }
    if (m.burst) {
      const start = wall();
      for (let i = m.burst.from; i < m.burst.from + m.burst.count; i += 10) {
        const batch = [];
        for (let j = i; j < Math.min(i + 10, m.burst.from + m.burst.count); j++) batch.push(raise(j));
        await Promise.all(batch);
        await turn();
      }
      process.send({ raised: true, start });
    }
    if (m.stop) {
      subject.server.closeAllConnections();
      subject.server.close(() => process.exit(0));
    }
  });
  subject.server.listen({ port: 0, host: '127.0.0.1', backlog: 2048 }, () => process.send({ port: subject.server.address().port }));
}

// ---------- the subscribers (child process) ----------

function subscribers() {
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests = [];
  let expected = 0;
  let delays = [];
  let last = 0;

  function received(text) {
    // One message per event; its RaisedAt is found without parsing the whole JSON.
    const at = /"RaisedAt":([\d.]+)/.exec(text);
    if (at === null) return;
    const now = wall();
    delays.push(now - Number(at[1]));
    last = now;
    if (expected > 0 && delays.length >= expected) {
      delays.sort((a, b) => a - b);
      const pick = (p) => delays[Math.min(delays.length - 1, Math.ceil((p / 100) * delays.length) - 1)];
      process.send({ done: true, count: delays.length, p50: pick(50), p99: pick(99), max: delays[delays.length - 1], last });
      expected = 0;
      delays = [];
    }
  }

  function open(port, selector) {
    return new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: selector, agent, headers: { accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`${selector}: HTTP ${res.statusCode}`));
        res.setEncoding('utf8');
        let buffer = '';
        let opened = false;
        res.on('data', (chunk) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!opened) {
              opened = true;
              resolve();
            }
            if (!message.startsWith(':')) received(message);
          }
        });
      });
      req.on('error', reject);
      requests.push(req);
    });
  }

  process.on('message', async (m) => {
    if (m.connect) {
      const { port, n } = m.connect;
      // In batches, so the server's accept queue is not what is measured.
      for (let i = 0; i < n; i += 100) {
        const batch = [];
        for (let s = i; s < Math.min(n, i + 100); s++) batch.push(open(port, SELECTORS[s % 2]));
        await Promise.all(batch);
      }
      process.send({ connected: n });
    }
    if (m.expect) {
      expected = m.expect;
      delays = [];
    }
    if (m.stop) {
      for (const req of requests) req.destroy();
      process.exit(0);
    }
  });
  process.send({ ready: true });
}

// ---------- the orchestrator ----------

function start(role, execArgv = []) {
  const child = fork(SELF, [`--role=${role}`], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = (key, ms = 120_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${role}: no '${key}' within ${ms / 1000} s`)), ms);
      const on = (m) => {
        if (!(key in m)) return;
        clearTimeout(timer);
        child.off('message', on);
        resolve(m);
      };
      child.on('message', on);
    });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, next, stop: () => (child.send({ stop: true }), exited) };
}

async function round(kind, n, paced, burst) {
  const server = start(kind, ['--expose-gc']);
  const clients = start('subscribers');
  try {
    const { port } = await server.next('port');
    await clients.next('ready');
    server.child.send({ memory: true });
    const before = (await server.next('memory')).memory;
    clients.child.send({ connect: { port, n } });
    await clients.next('connected');
    server.child.send({ memory: true });
    const idle = await server.next('memory');
    if (idle.streams !== n) throw new Error(`${kind}: ${idle.streams} streams open, not ${n}`);
    const memory = { bytesPerSubscriber: (idle.memory.heap - before.heap) / n, rssPerSubscriber: (idle.memory.rss - before.rss) / n };

    const cpu = async () => (server.child.send({ cpu: true }), (await server.next('cpu')).cpu);
    const run = async (what, from, count, extra) => {
      const done = clients.next('done');
      clients.child.send({ expect: deliveries(from, count, n) });
      const cpuBefore = await cpu();
      server.child.send({ [what]: { from, count, ...extra } });
      const raised = await server.next('raised');
      const result = await done;
      return { ...result, start: raised.start, cpuMs: (await cpu()) - cpuBefore };
    };
    const p = await run('paced', 0, paced.count, { rate: paced.rate });
    const b = await run('burst', paced.count, burst);
    const seconds = (b.last - b.start) / 1000;
    return {
      memory,
      paced: { p50: p.p50, p99: p.p99, max: p.max, deliveries: p.count },
      burst: { eventsPerSecond: burst / seconds, deliveriesPerSecond: b.count / seconds, p99: b.p99, serverCpuMsPerEvent: b.cpuMs / burst },
    };
  } finally {
    await Promise.all([clients.stop(), server.stop()]);
  }
}

async function main() {
  const opts = flags();
  const n = arg('subscribers', 1000);
  const rounds = arg('rounds', opts.quick ? 1 : 3);
  // Paced well below what a loaded two-core machine fans out (about 60 events/s to 1,000 subscribers here), so no queue forms.
  const paced = { count: opts.quick ? 50 : 100, rate: 20 };
  const burst = opts.quick ? 300 : 1000;
  const log = (m) => process.stderr.write(`${m}\n`);
  const loadStart = os.loadavg()[0].toFixed(2);
  const runs = { resourcery: [], bare: [] };
  for (let r = 0; r < rounds; r++)
    for (const kind of r % 2 === 0 ? ['resourcery', 'bare'] : ['bare', 'resourcery']) {
      log(`stream: round ${r + 1}/${rounds}, ${kind}, ${n} subscribers...`);
      runs[kind].push(await round(kind, n, paced, burst));
    }
  const summary = (list) => ({
    bytesPerSubscriber: median(list.map((x) => x.memory.bytesPerSubscriber)),
    rssPerSubscriber: median(list.map((x) => x.memory.rssPerSubscriber)),
    p50: median(list.map((x) => x.paced.p50)),
    p99: median(list.map((x) => x.paced.p99)),
    eventsPerSecond: median(list.map((x) => x.burst.eventsPerSecond)),
    deliveriesPerSecond: median(list.map((x) => x.burst.deliveriesPerSecond)),
    burstP99: median(list.map((x) => x.burst.p99)),
    serverCpuMsPerEvent: median(list.map((x) => x.burst.serverCpuMsPerEvent)),
  });
  const lib = summary(runs.resourcery);
  const bare = summary(runs.bare);
  const result = {
    subscribers: n,
    rounds,
    paced,
    burst,
    load: { start: loadStart, end: os.loadavg()[0].toFixed(2) },
    lib,
    bare,
    ratio: lib.eventsPerSecond / bare.eventsPerSecond,
    p99Ratio: lib.p99 / bare.p99,
    cpuRatio: bare.serverCpuMsPerEvent / lib.serverCpuMsPerEvent,
    runs,
  };
  if (opts.json) return console.log(JSON.stringify(result));
  const kb = (b) => fmt(b / 1024);
  console.log(
    `Event streams, ${n} subscribers, medians of ${rounds} round(s) (load ${result.load.start} -> ${result.load.end}); paced: ${paced.count} events at ${paced.rate}/s, burst: ${burst} events`,
  );
  console.log(
    table(
      ['', 'Resourcery', 'bare node:http', 'ratio', 'goal'],
      [
        ['burst, events/s', fmt(lib.eventsPerSecond), fmt(bare.eventsPerSecond), `${fmt(result.ratio)}x`, '>= 0.5x'],
        ['burst, deliveries/s', fmt(lib.deliveriesPerSecond), fmt(bare.deliveriesPerSecond), '', ''],
        [
          'burst, server CPU ms per event (to all its subscribers)',
          fmt(lib.serverCpuMsPerEvent),
          fmt(bare.serverCpuMsPerEvent),
          `${fmt(result.cpuRatio)}x`,
          '',
        ],
        ['paced, p50 ms raise to receipt', fmt(lib.p50, 2), fmt(bare.p50, 2), '', ''],
        ['paced, p99 ms raise to receipt', fmt(lib.p99, 2), fmt(bare.p99, 2), `${fmt(result.p99Ratio)}x`, '<= 2x'],
        ['idle subscriber, heap KB', kb(lib.bytesPerSubscriber), kb(bare.bytesPerSubscriber), '', '< 20 KB'],
        ['idle subscriber, RSS KB', kb(lib.rssPerSubscriber), kb(bare.rssPerSubscriber), '', ''],
      ],
    ),
  );
}

const role = process.argv.find((a) => a.startsWith('--role='))?.slice(7);
if (role === 'subscribers') subscribers();
else if (role === 'resourcery' || role === 'bare') await serve(role);
else await main();
