// Webhook delivery: events per second delivered to a local receiver, and the delay from
// `service.raise` to the receiver's arrival (p50 / p99), with 1 and with 50 webhooks on
// the event. The receiver is a bare node:http server in a child process of its own, so
// the service and the receiver do not share an event loop.
//   node bench/webhooks.mjs [--quick] [--json]
// Two runs per setup:
//   burst: every event raised at once, so the figure is delivery throughput and the
//          delay includes the wait in the queue behind the others;
//   paced: events raised at a steady rate well below throughput, so the delay is the
//          latency of one delivery (outbox write, worker pick-up, fetch, receiver).
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { createService } from '@resourcery/core';
import { flags, fmt, median, table } from './lib/stats.mjs';

const SELF = fileURLToPath(import.meta.url);
const wall = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
}

// ---------- the receiver (child process) ----------
function receiver() {
  let expected = 0;
  let delays = [];
  let last = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const now = wall();
      res.writeHead(204).end();
      for (const entity of JSON.parse(Buffer.concat(chunks).toString('utf8'))) delays.push(now - entity.RaisedAt);
      last = now;
      if (expected > 0 && delays.length >= expected) {
        process.send({ done: true, delays, last });
        expected = 0;
        delays = [];
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  process.on('message', (m) => {
    if (m.expect) expected = m.expect;
    if (m.stop) server.close(() => process.exit(0));
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
}

// ---------- the service side ----------
async function startReceiver() {
  const child = fork(SELF, ['--receiver'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve) => child.once('message', (m) => resolve(m.port)));
  return {
    url: `http://127.0.0.1:${port}`,
    expect(n) {
      const done = new Promise((resolve) => child.once('message', resolve));
      child.send({ expect: n });
      return done;
    },
    stop: () => child.send({ stop: true }),
  };
}

async function setup(receiverUrl, webhooks) {
  const service = createService({ allowPrivateDestinations: true, webhooks: { retrySchedule: [0, 1000, 5000] } });
  service.defineEvent('Bench.Tick');
  for (let i = 0; i < webhooks; i++) {
    const answer = await service.handle({
      method: 'POST',
      uri: '/Service.Admin.Webhook',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Label: `hook ${i}`, Destination: `${receiverUrl}/in/${i}`, EventSelector: '/Bench.Tick' }),
    });
    if (answer.status !== 201) throw new Error(`creating webhook ${i} answered ${answer.status}: ${answer.body}`);
  }
  return service;
}

/** Raises `events` events (paced at `rate` per second, or back to back) and waits for every delivery. */
async function round(receiver, service, { events, webhooks, rate }) {
  const arrived = receiver.expect(events * webhooks);
  const start = wall();
  for (let i = 0; i < events; i++) {
    if (rate) {
      const due = start + (i * 1000) / rate;
      const wait = due - wall();
      if (wait > 1) await sleep(wait);
    }
    await service.raise('Bench.Tick', { Seq: i, RaisedAt: wall() });
  }
  const { delays, last } = await arrived;
  await service.webhooks.idle();
  const sorted = delays.sort((a, b) => a - b);
  const failed = (
    await service.handle({
      method: 'REPORT',
      uri: '/Service.Admin.WebhookLog/Success=false',
      headers: { accept: 'application/json;raw=true' },
    })
  ).body;
  if (failed !== '0') throw new Error(`${failed} delivery attempts failed`);
  const seconds = (last - start) / 1000;
  return {
    deliveriesPerSecond: (events * webhooks) / seconds,
    eventsPerSecond: events / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

/** The ceiling: the same requests sent by a bare loop of fetch calls, 32 in flight. */
async function bareFetch(receiver, requests) {
  const arrived = receiver.expect(requests);
  const start = wall();
  let next = 0;
  const lane = async () => {
    while (next < requests) {
      const i = next++;
      const response = await fetch(`${receiver.url}/in/bare`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ Seq: i, RaisedAt: wall() }]),
      });
      await response.body?.cancel();
    }
  };
  await Promise.all(Array.from({ length: 32 }, lane));
  const { last } = await arrived;
  return requests / ((last - start) / 1000);
}

export async function run({ quick = false } = {}) {
  const receiver = await startReceiver();
  const rounds = quick ? 1 : 3;
  const bareRequests = quick ? 2000 : 10_000;
  const setups = [
    { name: '1 webhook', webhooks: 1, burst: quick ? 2000 : 10_000, paced: quick ? 200 : 1000, rate: 200 },
    { name: '50 webhooks', webhooks: 50, burst: quick ? 60 : 300, paced: quick ? 20 : 100, rate: 10 },
  ];
  const bare = [];
  try {
    for (const s of setups) {
      s.service = await setup(receiver.url, s.webhooks);
      s.bursts = [];
      s.paceds = [];
      // Warm-up: connections to the receiver, JIT.
      await round(receiver, s.service, { events: Math.max(50, Math.round(s.burst / 10)), webhooks: s.webhooks });
    }
    await bareFetch(receiver, 1000);
    // Rounds interleave the bare loop and the library so that drift falls on both.
    for (let r = 0; r < rounds; r++) {
      bare.push(await bareFetch(receiver, bareRequests));
      for (const s of setups) s.bursts.push(await round(receiver, s.service, { events: s.burst, webhooks: s.webhooks }));
      for (const s of setups) s.paceds.push(await round(receiver, s.service, { events: s.paced, webhooks: s.webhooks, rate: s.rate }));
    }
  } finally {
    for (const s of setups) await s.service?.close();
    receiver.stop();
  }
  const med = (list, key) => median(list.map((x) => x[key]));
  const results = setups.map((s) => ({
    name: s.name,
    webhooks: s.webhooks,
    burst: {
      events: s.burst,
      eventsPerSecond: med(s.bursts, 'eventsPerSecond'),
      deliveriesPerSecond: med(s.bursts, 'deliveriesPerSecond'),
      p50: med(s.bursts, 'p50'),
      p99: med(s.bursts, 'p99'),
    },
    paced: { events: s.paced, rate: s.rate, p50: med(s.paceds, 'p50'), p99: med(s.paceds, 'p99'), max: med(s.paceds, 'max') },
  }));
  return { rounds, concurrency: 32, bareFetchPerSecond: median(bare), results };
}

if (process.argv.includes('--receiver')) receiver();
else if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    console.log(`webhook delivery to a local node:http receiver; median of ${r.rounds} round(s); delivery concurrency ${r.concurrency}`);
    console.log(`ceiling: a bare loop of fetch calls (32 in flight) to the same receiver: ${fmt(r.bareFetchPerSecond)} requests/s`);
    console.log(
      table(
        [
          'setup',
          'events/s',
          'deliveries/s',
          'vs bare fetch',
          'burst p50 ms',
          'burst p99 ms',
          'paced rate/s',
          'paced p50 ms',
          'paced p99 ms',
        ],
        r.results.map((x) => [
          x.name,
          fmt(x.burst.eventsPerSecond),
          fmt(x.burst.deliveriesPerSecond),
          `${(x.burst.deliveriesPerSecond / r.bareFetchPerSecond).toFixed(2)}x`,
          fmt(x.burst.p50),
          fmt(x.burst.p99),
          String(x.paced.rate),
          fmt(x.paced.p50),
          fmt(x.paced.p99),
        ]),
      ),
    );
  }
}
