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
  const failed = (await service.handle({ method: 'REPORT', uri: '/Service.Admin.WebhookLog/Success=false', headers: { accept: 'application/json;raw=true' } })).body;
  if (failed !== '0') throw new Error(`${failed} delivery attempts failed`);
  const seconds = (last - start) / 1000;
  return { deliveriesPerSecond: (events * webhooks) / seconds, eventsPerSecond: events / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

export async function run({ quick = false } = {}) {
  const receiver = await startReceiver();
  const rounds = quick ? 1 : 3;
  const setups = [
    { name: '1 webhook', webhooks: 1, burst: quick ? 2000 : 10_000, paced: quick ? 200 : 1000, rate: 200 },
    { name: '50 webhooks', webhooks: 50, burst: quick ? 60 : 300, paced: quick ? 20 : 100, rate: 10 },
  ];
  const results = [];
  try {
    for (const s of setups) {
      const service = await setup(receiver.url, s.webhooks);
      // Warm-up: connections to the receiver, JIT.
      await round(receiver, service, { events: Math.max(50, Math.round(s.burst / 10)), webhooks: s.webhooks });
      const burst = [];
      const paced = [];
      for (let r = 0; r < rounds; r++) {
        burst.push(await round(receiver, service, { events: s.burst, webhooks: s.webhooks }));
        paced.push(await round(receiver, service, { events: s.paced, webhooks: s.webhooks, rate: s.rate }));
      }
      await service.close();
      const med = (list, key) => median(list.map((x) => x[key]));
      results.push({
        name: s.name,
        webhooks: s.webhooks,
        burst: { events: s.burst, eventsPerSecond: med(burst, 'eventsPerSecond'), deliveriesPerSecond: med(burst, 'deliveriesPerSecond'), p50: med(burst, 'p50'), p99: med(burst, 'p99') },
        paced: { events: s.paced, rate: s.rate, p50: med(paced, 'p50'), p99: med(paced, 'p99'), max: med(paced, 'max') },
      });
    }
  } finally {
    receiver.stop();
  }
  return { rounds, concurrency: 32, results };
}

if (process.argv.includes('--receiver')) receiver();
else if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    console.log(`webhook delivery to a local node:http receiver; median of ${r.rounds} round(s); delivery concurrency ${r.concurrency}`);
    console.log(table(['setup', 'events/s', 'deliveries/s', 'burst p50 ms', 'burst p99 ms', 'paced rate/s', 'paced p50 ms', 'paced p99 ms'], r.results.map((x) => [
      x.name, fmt(x.burst.eventsPerSecond), fmt(x.burst.deliveriesPerSecond), fmt(x.burst.p50), fmt(x.burst.p99), String(x.paced.rate), fmt(x.paced.p50), fmt(x.paced.p99),
    ])));
  }
}
