import type { AddressInfo } from 'node:net';
import { createServer } from '@resourcery/node';
import type { Service, ServiceOptions } from '@resourcery/core';
import { HeldOrigins, Origin } from '../src/outgoing/origin';
import { call, Receiver, serviceWithPeople } from './webhook-receiver';

/**
 * One client request may cause a bounded number of local requests and webhook deliveries
 * in all (option maxCausedRequests), however they fan out: two webhooks that POST to
 * /Person on Person.Inserted double the inserts at every level, which the depth limit
 * alone lets grow to 2^17.
 */

const HOOKS = '/Service.Admin.Webhook';
/** Far past any bound the tests set: seeing this many inserts means the fan-out ran away. */
const RUNAWAY = 1000;

let service: Service;
afterEach(() => service?.close());

/** A service with Person, counting Person.Inserted entities as they are raised. */
function counted(options: ServiceOptions) {
  service = serviceWithPeople({ webhooks: { retrySchedule: [0, 0, 0] }, ...options });
  const seen = { inserted: 0 };
  let ranAway: () => void;
  const runaway = new Promise<'runaway'>((resolve) => (ranAway = () => resolve('runaway')));
  service.events.subscribe((event) => {
    if (event.name !== 'Person.Inserted') return;
    seen.inserted += event.entities!.length;
    if (seen.inserted > RUNAWAY) ranAway();
  });
  /** Waits until no delivery is left, or until the inserts ran away (then stops the worker). */
  const settled = async () => {
    const outcome = await Promise.race([service.webhooks.idle().then(() => 'idle' as const), runaway]);
    if (outcome === 'runaway') await service.close();
    return outcome;
  };
  return { seen, settled };
}

async function echoHooks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const answer = await call(service, 'POST', HOOKS, { Destination: '/Person', EventSelector: '/Person.Inserted', Label: `echo ${i}` });
    expect(answer.status).toBe(201);
  }
}

describe('two webhooks feeding their own event', () => {
  test('stop after the bound: the client gets 201, every insert past it is refused with InfiniteLoopDetected, logged and recorded once', async () => {
    const { seen, settled } = counted({ maxCausedRequests: 20 });
    await echoHooks(2);
    const answer = await call(service, 'POST', '/Person', { Name: 'Echo' });
    expect(answer.status).toBe(201);
    expect(await settled()).toBe('idle');
    // The client's insert and one per local request allowed; each allowed insert raised two deliveries.
    expect(seen.inserted).toBe(1 + 20);
    expect((await call(service, 'REPORT', '/Person/Name=Echo')).body).toBe(21);
    const log = (await call(service, 'GET', '/Service.Admin.WebhookLog')).body as Array<Record<string, unknown>>;
    expect(log.filter((row) => row.Success)).toHaveLength(20);
    const refused = log.filter((row) => !row.Success);
    // 2 deliveries per insert, 20 of them allowed; a refusal is final (no retry).
    expect(refused).toHaveLength(2 * 21 - 20);
    for (const row of refused)
      expect(row).toMatchObject({ Status: 508, Attempt: 1, Error: expect.stringContaining('InfiniteLoopDetected') });
    const errors = (await call(service, 'GET', '/Service.Admin.Error/ErrorCode=InfiniteLoopDetected')).body as Array<
      Record<string, unknown>
    >;
    // One record per runaway request, not one per refusal: a loop must not flush the Error resource.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ Method: 'POST', ResourceName: '<unknown>', Message: expect.stringContaining('more than 20') });
  });

  test('the default bound (256) holds too', async () => {
    const { seen, settled } = counted({});
    await echoHooks(2);
    expect((await call(service, 'POST', '/Person', { Name: 'Echo' })).status).toBe(201);
    expect(await settled()).toBe('idle');
    expect(seen.inserted).toBe(1 + 256);
  });

  test('remote deliveries count too: local requests and remote attempts together stop at the bound', async () => {
    const receiver = await Receiver.start();
    try {
      const { seen, settled } = counted({ maxCausedRequests: 5 });
      await echoHooks(1);
      await call(service, 'POST', HOOKS, { Destination: `${receiver.url}/hook`, EventSelector: '/Person.Inserted' });
      expect((await call(service, 'POST', '/Person', { Name: 'Echo' })).status).toBe(201);
      expect(await settled()).toBe('idle');
      // Every insert but the client's is a local request let through; every call the receiver got, a remote one.
      expect(seen.inserted - 1 + receiver.calls.length).toBe(5);
      expect(receiver.calls.length).toBeGreaterThan(0);
      const log = (await call(service, 'GET', '/Service.Admin.WebhookLog')).body as Array<Record<string, unknown>>;
      expect(log.filter((row) => row.Success)).toHaveLength(5);
      // Each insert raised one local and one remote delivery; all but the 5 let through were refused.
      const refused = log.filter((row) => !row.Success);
      expect(refused).toHaveLength(2 * seen.inserted - 5);
      for (const row of refused) expect(row).toMatchObject({ Status: 508, Error: expect.stringContaining('InfiniteLoopDetected') });
      expect((await call(service, 'REPORT', '/Service.Admin.Error/ErrorCode=InfiniteLoopDetected')).body).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  test('each client request has its own budget', async () => {
    const { seen, settled } = counted({ maxCausedRequests: 6 });
    await echoHooks(2);
    expect((await call(service, 'POST', '/Person', { Name: 'First' })).status).toBe(201);
    expect((await call(service, 'POST', '/Person', { Name: 'Second' })).status).toBe(201);
    expect(await settled()).toBe('idle');
    expect((await call(service, 'REPORT', '/Person/Name=First')).body).toBe(7);
    expect((await call(service, 'REPORT', '/Person/Name=Second')).body).toBe(7);
    expect(seen.inserted).toBe(14);
  });
});

describe('one webhook feeding its own event', () => {
  test('stops at the depth limit (16), logged with 508 InfiniteLoopDetected and recorded in the Error resource', async () => {
    const { seen, settled } = counted({});
    await echoHooks(1);
    expect((await call(service, 'POST', '/Person', { Name: 'Echo' })).status).toBe(201);
    expect(await settled()).toBe('idle');
    expect(seen.inserted).toBe(1 + 16);
    const refused = (await call(service, 'GET', '/Service.Admin.WebhookLog/Success=false')).body as Array<Record<string, unknown>>;
    expect(refused).toEqual([
      expect.objectContaining({ Status: 508, Attempt: 1, Error: expect.stringMatching(/InfiniteLoopDetected.*nested more than 16/) }),
    ]);
    const errors = (await call(service, 'GET', '/Service.Admin.Error/ErrorCode=InfiniteLoopDetected')).body as Array<
      Record<string, unknown>
    >;
    expect(errors).toEqual([
      expect.objectContaining({ Method: 'POST', Uri: '/Person', Message: 'Local requests nested more than 16 deep' }),
    ]);
  });
});

describe('legitimate chains below the bound', () => {
  test('a chain of webhooks (Person -> Audit -> Archive) and a fan-out of 3 complete fully', async () => {
    const { settled } = counted({ maxCausedRequests: 8 });
    service.addResource({ name: 'Audit' });
    service.addResource({ name: 'Archive' });
    for (const destination of ['/Audit', '/Audit', '/Audit'])
      await call(service, 'POST', HOOKS, { Destination: destination, EventSelector: '/Person.Inserted' });
    await call(service, 'POST', HOOKS, { Destination: '/Archive', EventSelector: '/Audit.Inserted' });
    // 3 deliveries to /Audit, each raising one to /Archive: 6 of 8.
    expect((await call(service, 'POST', '/Person', { Name: 'Ada' })).status).toBe(201);
    expect(await settled()).toBe('idle');
    expect((await call(service, 'REPORT', '/Audit')).body).toBe(3);
    expect((await call(service, 'REPORT', '/Archive')).body).toBe(3);
    const log = (await call(service, 'GET', '/Service.Admin.WebhookLog')).body as Array<Record<string, unknown>>;
    expect(log.map((row) => row.Success)).toEqual([true, true, true, true, true, true]);
    expect((await call(service, 'REPORT', '/Service.Admin.Error')).body).toBe(0);
  });

  test('Source and Destination local requests count against the same bound', async () => {
    service = serviceWithPeople({ maxCausedRequests: 1 });
    service.addResource({ name: 'Copy' });
    await call(service, 'POST', '/Person', { Name: 'Ada' });
    const copied = await call(service, 'POST', '/Copy', undefined, { source: 'GET /Person' });
    expect(copied.status).toBe(201);
    // A GET whose Destination POSTs with a Source: the second local request is one too many.
    const unknown = await call(service, 'GET', '/Person', undefined, { destination: 'POST /$copy' });
    expect(unknown.status).toBe(404);
    const refused = await call(service, 'GET', '/Person', undefined, { destination: 'POST /Copy [Source: GET /Person]' });
    expect(refused.status).toBe(400);
    expect(refused.body.Message).toMatch(/answered 508/);
    expect((await call(service, 'REPORT', '/Service.Admin.Error/ErrorCode=InfiniteLoopDetected')).body).toBe(1);
  });
});

describe('outbox messages share their origin', () => {
  test('messages of one origin share one count; one read back from storage goes on from its written count; the last release lets go', () => {
    const held = new HeldOrigins();
    const live = new Origin('org_1');
    live.caused = 3;
    const a = held.hold('msg_a', 'org_1', 3, live);
    expect(a).toBe(live);
    // Written by an earlier run with a higher count: that count wins.
    const b = held.hold('msg_b', 'org_1', 5);
    expect(b).toBe(live);
    expect(live.caused).toBe(5);
    expect(held.hold('msg_a', 'org_1', 0)).toBe(live);
    held.release('msg_a');
    expect(held.of('msg_b')).toBe(live);
    held.release('msg_b');
    expect(held.of('msg_b')).toBeUndefined();
    // Another message of that origin, after a restart: a fresh origin with the written count.
    const again = held.hold('msg_c', 'org_1', 7);
    expect(again).not.toBe(live);
    expect([again.id, again.caused]).toEqual(['org_1', 7]);
    expect(again.take(8)).toBe(true);
    expect(again.take(8)).toBe(false);
  });
});

describe('the option', () => {
  test('must be a whole number of at least 1', () => {
    expect(() => serviceWithPeople({ maxCausedRequests: 0 })).toThrow(/maxCausedRequests/);
    expect(() => serviceWithPeople({ maxCausedRequests: 2.5 })).toThrow(/maxCausedRequests/);
  });
});

describe('over HTTP (node:http adapter)', () => {
  test('the client gets its 201 at once and the loop stops at the bound', async () => {
    const { seen, settled } = counted({ maxCausedRequests: 10 });
    await echoHooks(2);
    const server = createServer(service);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/Person`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ Name: 'Echo' }),
      });
      expect(answer.status).toBe(201);
      expect(await settled()).toBe('idle');
      expect(seen.inserted).toBe(11);
      const errors = await fetch(`http://127.0.0.1:${port}/Service.Admin.Error/ErrorCode=InfiniteLoopDetected`);
      expect(((await errors.json()) as { Data: unknown[] }).Data).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
