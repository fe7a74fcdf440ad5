import { createMetrics, DEFAULT_LATENCY_BUCKETS, type Service } from '@resourcery/core';
import { parseExposition, sample, type Exposition } from './metrics-support';
import { call, Receiver, serviceWithPeople, until } from './webhook-receiver';
import { SseReader } from './sse-support';

/** createMetrics (docs/operations.md#metrics): Prometheus's text format, read back and checked. */

const services: Service[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  for (const r of receivers.splice(0)) await r.close();
});

function service(options: Parameters<typeof serviceWithPeople>[0] = {}): Service {
  const s = serviceWithPeople(options);
  services.push(s);
  return s;
}

async function read(metrics: ReturnType<typeof createMetrics>): Promise<Exposition> {
  return parseExposition(await metrics.text());
}

describe('requests and latency', () => {
  test('the counter moves by exactly the requests sent, by declared resource, method and status', async () => {
    const s = service();
    await call(s, 'POST', '/Person', { Id: 0 }); // before the metrics: not counted
    const metrics = createMetrics(s);
    expect(metrics.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    for (let i = 1; i <= 3; i++) await call(s, 'POST', '/Person', { Id: i, Name: `p${i}` });
    for (let i = 0; i < 5; i++) await call(s, 'GET', '/Person/Id=1');
    await call(s, 'GET', '/Person/_/limit=many');
    await call(s, 'GET', '/Nobody');
    await call(s, 'GET', '/Someone.Else/Id=1');
    await call(s, 'DELETE', '/Person/Id=3');
    const m = await read(metrics);
    expect(m.types.get('resourcery_requests_total')).toBe('counter');
    const requests = m.samples.filter((x) => x.name === 'resourcery_requests_total');
    expect(requests.map((x) => [x.labels.resource, x.labels.method, x.labels.status, x.value])).toEqual([
      ['Person', 'POST', '201', 3],
      ['Person', 'GET', '200', 5],
      ['Person', 'GET', '400', 1],
      // Unknown resources never become labels of their own: both count under one.
      ['(none)', 'GET', '404', 2],
      ['Person', 'DELETE', '200', 1],
    ]);
    // Counting goes on between scrapes, and stops with close().
    await call(s, 'GET', '/Person/Id=1');
    expect(sample(await read(metrics), 'resourcery_requests_total', { resource: 'Person', method: 'GET', status: '200' })).toBe(6);
    metrics.close();
    await call(s, 'GET', '/Person/Id=1');
    expect(sample(await read(metrics), 'resourcery_requests_total', { resource: 'Person', method: 'GET', status: '200' })).toBe(6);
  });

  test('the latency histogram: cumulative buckets, +Inf equal to the count, a sum of seconds', async () => {
    const s = service();
    s.addResource({
      name: 'Slow',
      hooks: { beforeRead: () => new Promise((r) => setTimeout(r, 30)) },
    });
    const metrics = createMetrics(s);
    for (let i = 0; i < 4; i++) await call(s, 'GET', '/Person');
    await call(s, 'GET', '/Slow');
    const m = await read(metrics);
    expect(m.types.get('resourcery_request_duration_seconds')).toBe('histogram');
    for (const [resource, n] of [
      ['Person', 4],
      ['Slow', 1],
    ] as const) {
      const buckets = m.samples.filter((x) => x.name === 'resourcery_request_duration_seconds_bucket' && x.labels.resource === resource);
      expect(buckets.map((b) => b.labels.le)).toEqual([...DEFAULT_LATENCY_BUCKETS.map(String), '+Inf']);
      for (let i = 1; i < buckets.length; i++) expect(buckets[i].value).toBeGreaterThanOrEqual(buckets[i - 1].value);
      expect(buckets.at(-1)!.value).toBe(n);
      expect(sample(m, 'resourcery_request_duration_seconds_count', { resource, method: 'GET' })).toBe(n);
    }
    // The slow GET waited 30 ms in its hook: it is in no bucket below 25 ms.
    const slow = (le: string) => sample(m, 'resourcery_request_duration_seconds_bucket', { resource: 'Slow', le });
    expect([slow('0.001'), slow('0.025')]).toEqual([0, 0]);
    expect(sample(m, 'resourcery_request_duration_seconds_sum', { resource: 'Slow' })).toBeGreaterThanOrEqual(0.029);
  });

  test('a method no client should send counts as _OTHER, not as a label of its own', async () => {
    const s = service();
    const metrics = createMetrics(s);
    await s.handle({ method: 'BREW', uri: '/Person', headers: {} });
    const text = await metrics.text();
    expect(sample(parseExposition(text), 'resourcery_requests_total', { method: '_OTHER', resource: 'Person' })).toBe(1);
    expect(text).not.toContain('BREW');
  });

  test('buckets must increase', () => {
    expect(() => createMetrics(service(), { buckets: [0.1, 0.05] })).toThrow(/increasing/);
  });
});

describe('webhooks and event streams', () => {
  test('outbox depth and delivery outcomes reflect real deliveries', async () => {
    const ok = await Receiver.start();
    const failing = await Receiver.start();
    receivers.push(ok, failing);
    failing.status = 500;
    const s = service({ webhooks: { retrySchedule: [0, 600_000] } });
    const metrics = createMetrics(s);
    let m = await read(metrics);
    expect(sample(m, 'resourcery_webhook_outbox_messages')).toBe(0);
    for (const url of [ok.url, failing.url])
      expect((await call(s, 'POST', '/Service.Admin.Webhook', { Destination: url, EventSelector: '/Person.Inserted' })).status).toBe(201);
    await call(s, 'POST', '/Person', [{ Id: 1 }]);
    await call(s, 'POST', '/Person', [{ Id: 2 }]);
    const outcome = (x: Exposition, o: string) => sample(x, 'resourcery_webhook_deliveries_total', { outcome: o });
    m = await until(
      async () => {
        const x = await read(metrics);
        return outcome(x, 'delivered') === 2 && outcome(x, 'retrying') === 2 && x;
      },
      'two deliveries and two failures',
      30_000,
    );
    expect(m.types.get('resourcery_webhook_deliveries_total')).toBe('counter');
    expect(outcome(m, 'given_up')).toBe(0);
    // The delivered messages left the outbox; the failed ones wait there for their retry.
    m = await until(
      async () => {
        const x = await read(metrics);
        return sample(x, 'resourcery_webhook_outbox_messages') === 2 && x;
      },
      'two messages left in the outbox',
      30_000,
    );
    expect(m.types.get('resourcery_webhook_outbox_messages')).toBe('gauge');
    const stored = await s.webhooks.outbox.storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 });
    expect([...(stored.entities as Iterable<unknown>)]).toHaveLength(2);
  });

  test('a delivery that will not be retried counts as given_up', async () => {
    const failing = await Receiver.start();
    receivers.push(failing);
    failing.status = 500;
    const s = service({ webhooks: { retrySchedule: [0] } });
    const metrics = createMetrics(s);
    await call(s, 'POST', '/Service.Admin.Webhook', { Destination: failing.url, EventSelector: '/Person.Inserted' });
    await call(s, 'POST', '/Person', [{ Id: 1 }]);
    await s.idle();
    const m = await read(metrics);
    expect(sample(m, 'resourcery_webhook_deliveries_total', { outcome: 'given_up' })).toBe(1);
    expect(sample(m, 'resourcery_webhook_deliveries_total', { outcome: 'retrying' })).toBe(0);
    expect(sample(m, 'resourcery_webhook_outbox_messages')).toBe(0);
  });

  test('the subscribers gauge follows the event streams opened and closed', async () => {
    const s = service();
    const metrics = createMetrics(s);
    const subscribers = async () => sample(await read(metrics), 'resourcery_event_stream_subscribers');
    expect(await subscribers()).toBe(0);
    const open = async () => {
      const res = await s.handle({ method: 'GET', uri: '/Person.Inserted', headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(200);
      const reader = new SseReader(res.body as AsyncIterable<string>);
      expect(await reader.nextAny()).toEqual({ comment: 'ok' });
      return reader;
    };
    const a = await open();
    const b = await open();
    expect(await subscribers()).toBe(2);
    await a.close();
    expect(await until(async () => (await subscribers()) === 1, 'one stream left', 30_000)).toBe(true);
    await b.close();
    expect(await until(async () => (await subscribers()) === 0, 'no stream left', 30_000)).toBe(true);
    // Opening a stream is a request like any other.
    expect(sample(await read(metrics), 'resourcery_requests_total', { resource: 'Person.Inserted', method: 'GET', status: '200' })).toBe(2);
  });
});
