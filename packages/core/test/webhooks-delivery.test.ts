import fc from 'fast-check';
import { createService, DEFAULT_RETRY_SCHEDULE, MemoryStorage, ServiceError, type Service, type Storage } from '@resourcery/core';
import { retryDelay } from '../src/webhooks/delivery';
import { refusedResolved } from '../src/outgoing/guard';
import { call, Receiver, serviceWithPeople, until } from './webhook-receiver';

const HOOKS = '/Service.Admin.WebhookLog';

interface LogRow {
  Time: string;
  WebhookId: string;
  MessageId: string;
  Event: string;
  Attempt: number;
  Status: number | null;
  Success: boolean;
  DurationMs: number;
  Error: string | null;
}

async function logRows(service: Service): Promise<LogRow[]> {
  return (await call(service, 'GET', '/Service.Admin.WebhookLog')).body ?? [];
}

async function outbox(service: Service): Promise<Array<Record<string, unknown>>> {
  const { entities } = await service.webhooks.outbox.storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 });
  return [...(entities as Iterable<Record<string, unknown>>)];
}

async function addHook(service: Service, destination: string, extra: Record<string, unknown> = {}): Promise<string> {
  const answer = await call(service, 'POST', '/Service.Admin.Webhook', {
    Destination: destination,
    EventSelector: '/Person.Inserted',
    ...extra,
  });
  expect(answer.status).toBe(201);
  return answer.body[0].Id;
}

const services: Service[] = [];
const receivers: Receiver[] = [];
function track<T extends Service | Receiver>(x: T): T {
  if (x instanceof Receiver) receivers.push(x);
  else services.push(x as Service);
  return x;
}
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
  for (const r of receivers.splice(0)) await r.close();
});

describe('retries back off exponentially with at most ±20 % jitter (DESIGN 8)', () => {
  test('the default schedule is 0 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h', () => {
    expect(DEFAULT_RETRY_SCHEDULE).toEqual([0, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000]);
  });

  test('every delay stays within ±20 % of the schedule, and none follows the last attempt', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 1, maxLength: 10 }),
        fc.nat(12),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (schedule, attempt, random) => {
          const delay = retryDelay(schedule, attempt, () => random);
          if (attempt >= schedule.length) return delay === null;
          return delay! >= Math.floor(schedule[attempt] * 0.8) && delay! <= Math.ceil(schedule[attempt] * 1.2);
        },
      ),
    );
  });

  test('a bad schedule is refused when the service is created', () => {
    expect(() => createService({ webhooks: { retrySchedule: [] } })).toThrow(/retrySchedule/);
    expect(() => createService({ webhooks: { timeoutMs: 0 } })).toThrow(/timeoutMs/);
  });
});

describe('the outbox is written before the raising request answers', () => {
  test('a held delivery is already in the outbox when the POST returns, and leaves it once delivered', async () => {
    const receiver = track(await Receiver.start());
    receiver.hang = true;
    const service = track(serviceWithPeople());
    const hookId = await addHook(service, `${receiver.url}/in`);
    await call(service, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    const [message] = await outbox(service);
    expect(message).toMatchObject({ WebhookId: hookId, Event: 'Person.Inserted', Entities: [{ Id: 1, Name: 'Ada' }], Attempt: 0 });
    receiver.hang = false;
    await receiver.waitFor(1);
  });
});

describe('a receiver that is down and comes back gets every delivery; every attempt is logged', () => {
  test('five events, some failed attempts each, then all five arrive with stable webhook-ids', async () => {
    const first = await Receiver.start();
    const port = first.port;
    await first.close();
    const service = track(serviceWithPeople({ webhooks: { retrySchedule: [0, ...Array(60).fill(40)] } }));
    const hookId = await addHook(service, `http://127.0.0.1:${port}/in`);
    for (let id = 1; id <= 5; id++) await call(service, 'POST', '/Person', { Id: id, Name: `P${id}` });
    await until(async () => (await logRows(service)).filter((r) => !r.Success).length >= 10, 'ten failed attempts');
    const back = track(await Receiver.start(port));
    await back.waitFor(5);
    await service.webhooks.idle();

    const ids = back.calls.map((c) => c.headers['webhook-id']);
    expect(new Set(ids).size).toBe(5);
    expect(back.calls.map((c) => JSON.parse(c.body.toString())[0].Id).sort()).toEqual([1, 2, 3, 4, 5]);

    const rows = await logRows(service);
    const byMessage = new Map<string, LogRow[]>();
    for (const row of rows) byMessage.set(row.MessageId, [...(byMessage.get(row.MessageId) ?? []), row]);
    expect([...byMessage.keys()].sort()).toEqual([...ids].sort());
    for (const attempts of byMessage.values()) {
      attempts.sort((a, b) => a.Attempt - b.Attempt);
      expect(attempts.map((a) => a.Attempt)).toEqual(attempts.map((_, i) => i + 1));
      expect(attempts.length).toBeGreaterThan(1);
      const last = attempts.pop()!;
      expect(last).toMatchObject({ WebhookId: hookId, Event: 'Person.Inserted', Status: 200, Success: true, Error: null });
      for (const failed of attempts)
        expect(failed).toMatchObject({ Status: null, Success: false, Error: expect.stringMatching(/fetch failed|ECONNREFUSED/) });
    }
    expect(Object.keys(rows[0])).toEqual([
      'Time',
      'WebhookId',
      'MessageId',
      'Event',
      'Attempt',
      'Status',
      'Success',
      'DurationMs',
      'Error',
    ]);
    expect(await outbox(service)).toEqual([]);
  });
});

describe('only a 2xx answer is a success', () => {
  test('5xx and 3xx answers are failed attempts, retried with the same webhook-id', async () => {
    const receiver = track(await Receiver.start());
    receiver.status = 503;
    const service = track(serviceWithPeople({ webhooks: { retrySchedule: [0, 10, 10, 10, 10] } }));
    await addHook(service, `${receiver.url}/in`);
    await call(service, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    await receiver.waitFor(1);
    receiver.status = 302;
    await receiver.waitFor(2);
    receiver.status = 204;
    await receiver.waitFor(3);
    await service.webhooks.idle();
    const rows = (await logRows(service)).sort((a, b) => a.Attempt - b.Attempt);
    expect(rows.map((r) => [r.Status, r.Success])).toEqual([
      [503, false],
      [302, false],
      [204, true],
    ]);
    expect(rows[0].Error).toMatch(/^HTTP 503/);
    expect(new Set(receiver.calls.map((c) => c.headers['webhook-id'])).size).toBe(1);
  });

  test('after the last attempt of the schedule the message fails and leaves the outbox', async () => {
    const receiver = track(await Receiver.start());
    receiver.status = 500;
    const service = track(serviceWithPeople({ webhooks: { retrySchedule: [0, 5, 5] } }));
    await addHook(service, `${receiver.url}/in`);
    await call(service, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    await receiver.waitFor(3);
    await service.webhooks.idle();
    expect(receiver.calls).toHaveLength(3);
    expect((await logRows(service)).map((r) => r.Success)).toEqual([false, false, false]);
    expect(await outbox(service)).toEqual([]);
  });
});

describe('a receiver that answers 410 Gone is not called again', () => {
  test('no retry, a log row saying why, and the webhook paused; unpausing delivers again', async () => {
    const receiver = track(await Receiver.start());
    receiver.status = 410;
    const service = track(serviceWithPeople({ webhooks: { retrySchedule: [0, 5, 5, 5] } }));
    await addHook(service, `${receiver.url}/in`, { Label: 'gone' });
    await call(service, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    await receiver.waitFor(1);
    await service.webhooks.idle();
    expect(receiver.calls).toHaveLength(1);
    const rows = await logRows(service);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ Status: 410, Success: false, Error: expect.stringMatching(/^HTTP 410.*Gone: the webhook is paused/) });
    expect(await outbox(service)).toEqual([]);
    const hook = (await call(service, 'GET', '/Service.Admin.Webhook/Label=gone')).body[0];
    expect(hook.IsPaused).toBe(true);
    // Later events are not sent to it; once unpaused, they are.
    await call(service, 'POST', '/Person', { Id: 2, Name: 'Bo' });
    await service.webhooks.idle();
    expect(receiver.calls).toHaveLength(1);
    receiver.status = 200;
    expect((await call(service, 'PATCH', '/Service.Admin.Webhook/Label=gone', { IsPaused: false })).status).toBe(200);
    await call(service, 'POST', '/Person', { Id: 3, Name: 'Cy' });
    await receiver.waitFor(2);
  });
});

describe('an attempt that gets no answer times out (per-attempt timeout)', () => {
  test('a receiver that never answers is a failed attempt with a timeout error', async () => {
    const receiver = track(await Receiver.start());
    receiver.hang = true;
    const service = track(serviceWithPeople({ webhooks: { timeoutMs: 150, retrySchedule: [0, 10] } }));
    await addHook(service, `${receiver.url}/in`);
    const answer = await call(service, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    expect(answer.status).toBe(201);
    await receiver.waitFor(2);
    await service.webhooks.idle();
    const rows = await logRows(service);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ Status: null, Success: false, Error: 'Timed out after 150 ms' });
  });
});

describe('the outbox is durable: messages outlive the instance that wrote them', () => {
  test('close() hands held messages back; another instance on the same storage delivers them', async () => {
    const stores = new Map<string, Storage>();
    const adminStorage = (name: string) => {
      if (!stores.has(name)) stores.set(name, new MemoryStorage());
      return stores.get(name)!;
    };
    const receiver = track(await Receiver.start());
    receiver.status = 500;
    const first = serviceWithPeople({ adminStorage, webhooks: { retrySchedule: [0, 100] } });
    await addHook(first, `${receiver.url}/in`);
    await call(first, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    await until(async () => (await logRows(first)).length === 1, 'the first attempt');
    await first.close();
    const [held] = await outbox(first);
    expect(held).toMatchObject({ Attempt: 1, LockedUntil: 0 });

    receiver.status = 200;
    const second = track(serviceWithPeople({ adminStorage, webhooks: { retrySchedule: [0, 100] } }));
    await receiver.waitFor(2);
    await until(async () => (await outbox(second)).length === 0, 'an empty outbox');
    expect(receiver.calls[1].headers['webhook-id']).toBe(receiver.calls[0].headers['webhook-id']);
    const rows = (await logRows(second)).sort((a, b) => a.Attempt - b.Attempt);
    expect(rows.map((r) => [r.Attempt, r.Success])).toEqual([
      [1, false],
      [2, true],
    ]);
  });
});

describe('leases: the sending instance renews them (heartbeat), another takes over only what is no longer renewed', () => {
  test('an attempt that lasts several leases stays with its instance: the other one, sweeping all the time, never sends it', async () => {
    const stores = new Map<string, Storage>();
    const adminStorage = (name: string) => {
      if (!stores.has(name)) stores.set(name, new MemoryStorage());
      return stores.get(name)!;
    };
    const receiver = track(await Receiver.start());
    receiver.hang = true;
    const webhooks = { leaseMs: 150, sweepIntervalMs: 10, timeoutMs: 30_000 };
    const sender = track(serviceWithPeople({ adminStorage, webhooks }));
    const other = track(serviceWithPeople({ adminStorage, webhooks }));
    await addHook(sender, `${receiver.url}/in`);
    await call(sender, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    await receiver.waitFor(1);
    const [message] = await outbox(other);
    // Leased for leaseMs, renewed while the attempt runs (before: leased for the attempt timeout + 60 s, never renewed).
    expect(message.LockedUntil as number).toBeLessThanOrEqual(Date.now() + webhooks.leaseMs);
    await until(async () => ((await outbox(other))[0]?.LockedUntil as number) > (message.LockedUntil as number), 'a renewed lease');
    await new Promise((resolve) => setTimeout(resolve, 6 * webhooks.leaseMs));
    // Without renewals the lease ran out after 150 ms and the other instance sent the message again.
    expect(receiver.calls).toHaveLength(1);
  });
});

describe('the WebhookLog is bounded to the newest rows', () => {
  test('with maxLogRecords 5, ten deliveries leave at most a tenth more than 5 rows, the newest', async () => {
    const receiver = track(await Receiver.start());
    const service = track(serviceWithPeople({ webhooks: { maxLogRecords: 5 } }));
    await addHook(service, `${receiver.url}/in`);
    for (let id = 1; id <= 10; id++) {
      await call(service, 'POST', '/Person', { Id: id, Name: `P${id}` });
      await service.webhooks.idle();
    }
    const count = (await call(service, 'REPORT', HOOKS)).body;
    expect(count).toBeGreaterThanOrEqual(5);
    expect(count).toBeLessThanOrEqual(6);
    const newest = receiver.calls[9].headers['webhook-id'];
    expect((await logRows(service)).some((r) => r.MessageId === newest)).toBe(true);
  });
});

describe('the SSRF guard checks the resolved address before sending (DESIGN 8)', () => {
  test('a name that resolves to a private address is refused; a public one passes', async () => {
    const resolveTo =
      (...addresses: string[]) =>
      async () =>
        addresses;
    const url = new URL('https://hooks.example.com/in');
    expect(await refusedResolved(url, resolveTo('93.184.216.34'))).toBeNull();
    expect(await refusedResolved(url, resolveTo('93.184.216.34', '10.0.0.7'))).toMatch(/10\.0\.0\.7 is a private address/);
    expect(await refusedResolved(url, resolveTo('::ffff:169.254.169.254'))).toMatch(/link-local/);
    expect(await refusedResolved(url, resolveTo('fd12::1'))).toMatch(/unique-local/);
  });

  test('an instance without allowPrivateDestinations refuses to send to a private address saved elsewhere', async () => {
    const receiver = track(await Receiver.start());
    const webhooks = new MemoryStorage();
    const adminStorage = (name: string) => (name === 'Service.Admin.Webhook' ? webhooks : new MemoryStorage());
    const permissive = track(serviceWithPeople({ adminStorage }));
    await addHook(permissive, `${receiver.url}/in`);
    const strict = track(serviceWithPeople({ adminStorage, allowPrivateDestinations: false }));
    const answer = await call(strict, 'POST', '/Person', { Id: 1, Name: 'Ada' });
    expect(answer.status).toBe(201);
    await strict.webhooks.idle();
    expect(receiver.calls).toEqual([]);
    expect(await logRows(strict)).toEqual([
      expect.objectContaining({
        Success: false,
        Status: null,
        Error: expect.stringMatching(/^Refused: 127\.0\.0\.1 is a loopback address/),
      }),
    ]);
  });
});

describe('pausing a webhook also stops the retries it had pending (SPEC 3)', () => {
  test('after the pause no more calls arrive and the outbox empties', async () => {
    const receiver = track(await Receiver.start());
    receiver.status = 503;
    const service = track(serviceWithPeople({ webhooks: { retrySchedule: [0, ...Array(50).fill(30)] } }));
    await addHook(service, `http://127.0.0.1:${receiver.port}/in`, { Label: 'flaky' });
    await call(service, 'POST', '/Person', { Id: 1, Name: 'P1' });
    await receiver.waitFor(2);
    expect((await call(service, 'PATCH', '/Service.Admin.Webhook/Label=flaky', { IsPaused: true })).status).toBe(200);
    await until(async () => (await outbox(service)).length === 0, 'the outbox to empty');
    const seen = receiver.calls.length;
    await service.webhooks.idle();
    expect(receiver.calls.length).toBe(seen);
    const last = (await logRows(service)).pop()!;
    expect(last).toMatchObject({ Success: false, Error: expect.stringMatching(/paused/) });
  });
});

describe('a webhook never borrows rights: its author must be able to read what it delivers (DESIGN 6)', () => {
  const keys = [
    { key: 'hooks-only', allow: [{ resources: ['Service.Admin.*'] }] },
    { key: 'hooks-and-people', allow: [{ resources: ['Service.Admin.*'] }, { resources: ['Person'], methods: ['GET'] }] },
  ];
  test.each([
    ['hooks-only', 403],
    ['hooks-and-people', 201],
  ])('%s -> %i', async (key, status) => {
    const service = track(serviceWithPeople({ apiKeys: keys }));
    const answer = await call(
      service,
      'POST',
      '/Service.Admin.Webhook',
      { Destination: 'http://192.0.2.1/x', EventSelector: '/Person.Inserted' },
      { authorization: `apikey ${key}` },
    );
    expect(answer.status).toBe(status);
    if (status === 403) expect(answer.body.ErrorCode).toBe('Forbidden');
  });
});

describe("the service's own storage unavailable is not an attempt", () => {
  test('a delivery whose webhook cannot be read (the database is down) is tried again soon, with no attempt counted nor logged', async () => {
    // The webhooks' table fails once with 503, as the SQL storage does while its database is down.
    const hooks = new MemoryStorage();
    let failures = 0;
    const flaky: Storage = new Proxy(hooks, {
      get(target, name) {
        if (name === 'select')
          return (query: Parameters<Storage['select']>[0]) => {
            if (failures > 0) {
              failures--;
              return Promise.reject(new ServiceError('ServiceUnavailable', 'The database is unavailable: test'));
            }
            return target.select(query);
          };
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const stores = new Map<string, Storage>([['Service.Admin.Webhook', flaky]]);
    const adminStorage = (name: string) => {
      if (!stores.has(name)) stores.set(name, new MemoryStorage());
      return stores.get(name)!;
    };
    const receiver = track(await Receiver.start());
    // A counted failure would wait 10 minutes for the next attempt.
    const service = track(serviceWithPeople({ adminStorage, webhooks: { retrySchedule: [0, 600_000] } }));
    await addHook(service, `${receiver.url}/in`);
    // The event's webhooks are read before the write (they are); then the cache is dropped and the next read fails.
    const person = service.resources.find('Person')!.storage;
    const write = person.write.bind(person);
    person.write = async (batch) => {
      await write(batch);
      service.webhooks.invalidate();
      failures = 1;
    };
    expect((await call(service, 'POST', '/Person', { Id: 1, Name: 'Ada' })).status).toBe(201);
    // Before: logged as attempt 1 (failed), the next attempt 10 minutes later.
    await receiver.waitFor(1);
    // The read did fail once.
    expect(failures).toBe(0);
    await service.webhooks.idle();
    const rows = await logRows(service);
    expect(rows.map((r) => [r.Attempt, r.Success])).toEqual([[1, true]]);
    expect(await outbox(service)).toEqual([]);
  });
});
