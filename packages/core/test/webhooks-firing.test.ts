import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { ContentType, Service } from '@resourcery/core';
import { call, Receiver, serviceWithPeople } from './webhook-receiver';

const HOOKS = '/Service.Admin.Webhook';
const SECRET = `whsec_${Buffer.from('a test secret of thirty-two bytes').toString('base64')}`;

/** A write-only CSV content type plugged in through the protocols option. */
const csv: ContentType = {
  name: 'CSV',
  mimeType: 'text/csv',
  bindings: ['text/csv'],
  write(result) {
    const rows = result.kind === 'entities' ? result.entities : [];
    return rows.map((r) => Object.values(r).join(',')).join('\n');
  },
};

let service: Service;
let receiver: Receiver;
beforeEach(async () => {
  receiver = await Receiver.start();
  service = serviceWithPeople({ protocols: [{ name: 'Tabular', identifier: 'tabular', contentTypes: [csv] }] });
  await call(service, 'POST', '/Person', [
    { Id: 1, Name: 'Ada Lovelace', Age: 36, Email: 'ada@example.com', Address: { City: 'London' } },
    { Id: 2, Name: 'Alan Turing', Age: 41, Email: null, Address: { City: 'Wilmslow' } },
  ]);
});
afterEach(async () => {
  await service.close();
  await receiver.close();
});

async function hook(definition: Record<string, unknown>): Promise<string> {
  const answer = await call(service, 'POST', HOOKS, { Destination: `${receiver.url}/hook`, ...definition });
  expect(answer.status).toBe(201);
  return answer.body[0].Id;
}

/** Waits until every delivery is done, then returns what the receiver got. */
async function delivered() {
  await service.webhooks.idle();
  return receiver.calls;
}

describe("a matching event triggers a request with the webhook's Method and Headers (SPEC 6.3)", () => {
  test('the matching entities arrive as a JSON array, even one entity', async () => {
    await hook({ EventSelector: '/Person.Inserted/Age>50', Headers: { 'X-Token': 't0k' } });
    await call(service, 'POST', '/Person', [
      { Id: 3, Name: 'Young', Age: 20 },
      { Id: 4, Name: 'Old', Age: 90 },
    ]);
    const calls = await delivered();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ method: 'POST', path: '/hook' });
    expect(calls[0].headers['x-token']).toBe('t0k');
    expect(calls[0].headers['content-type']).toMatch(/^application\/json/);
    expect(receiver.json(0)).toEqual([{ Id: 4, Name: 'Old', Age: 90 }]);
  });

  test('an event that does not match sends nothing', async () => {
    await hook({ EventSelector: '/Person.Inserted/Age>50' });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'Young', Age: 20 });
    expect(await delivered()).toEqual([]);
  });

  test('an event of another name sends nothing', async () => {
    await hook({ EventSelector: '/Person.Deleted' });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'Young', Age: 20 });
    expect(await delivered()).toEqual([]);
  });

  test('dotted locators and null checks select payload entities', async () => {
    await hook({ EventSelector: '/Person.Updated/Email!=null&Name.Length>11&Address.City=London' });
    await call(service, 'PATCH', '/Person/_/unsafe=true', { Age: 50 });
    await delivered();
    expect(receiver.json(0)).toEqual([expect.objectContaining({ Id: 1, Age: 50 })]);
  });

  test('a selector without conditions takes every entity, and the Method is used', async () => {
    await hook({ EventSelector: '/Person.Deleted', Method: 'PUT' });
    await call(service, 'DELETE', '/Person/_/unsafe=true');
    const calls = await delivered();
    expect(calls[0].method).toBe('PUT');
    expect((receiver.json(0) as unknown[]).length).toBe(2);
  });

  test('each matching webhook gets its own request', async () => {
    await hook({ EventSelector: '/Person.Inserted' });
    await hook({ EventSelector: '/Person.Inserted/Age>30' });
    await call(service, 'POST', '/Person', { Id: 5, Name: 'Grace', Age: 85 });
    expect(await delivered()).toHaveLength(2);
  });

  test('an application event raised with service.raise is delivered', async () => {
    service.defineEvent('Sensor.Reading', { schema: { type: 'object', properties: { Celsius: { type: 'number' } } } });
    await hook({ EventSelector: '/Sensor.Reading/Celsius>=30' });
    await service.raise('Sensor.Reading', [{ Celsius: 12 }, { Celsius: 31.5 }]);
    await delivered();
    expect(receiver.json(0)).toEqual([{ Celsius: 31.5 }]);
  });
});

describe('paused webhooks are skipped (SPEC 3)', () => {
  test('a paused webhook sends nothing, and sends again once resumed', async () => {
    await hook({ EventSelector: '/Person.Inserted', Label: 'p', IsPaused: true });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'Paused', Age: 1 });
    expect(await delivered()).toEqual([]);
    await call(service, 'PATCH', `${HOOKS}/Label=p`, { IsPaused: false });
    await call(service, 'POST', '/Person', { Id: 4, Name: 'Resumed', Age: 1 });
    await delivered();
    expect(receiver.json(0)).toEqual([{ Id: 4, Name: 'Resumed', Age: 1 }]);
  });

  test('a deleted webhook sends nothing', async () => {
    await hook({ EventSelector: '/Person.Inserted', Label: 'gone' });
    await call(service, 'DELETE', `${HOOKS}/Label=gone`);
    await call(service, 'POST', '/Person', { Id: 3, Name: 'X', Age: 1 });
    expect(await delivered()).toEqual([]);
  });
});

describe("the webhook's Content-Type selects the format of an entity payload (SPEC 6.3.4)", () => {
  test("a content type of the service's protocols writes the body", async () => {
    await hook({ EventSelector: '/Person.Inserted', Headers: { 'Content-Type': 'text/csv' } });
    await call(service, 'POST', '/Person', [
      { Id: 3, Name: 'A', Age: 1 },
      { Id: 4, Name: 'B', Age: 2 },
    ]);
    const calls = await delivered();
    expect(calls[0].headers['content-type']).toBe('text/csv');
    expect(calls[0].body.toString()).toBe('3,A,1\n4,B,2');
  });

  test('JSON Lines: one entity per line', async () => {
    await hook({ EventSelector: '/Person.Inserted', Headers: { 'Content-Type': 'application/x-ndjson' } });
    await call(service, 'POST', '/Person', [
      { Id: 3, Name: 'A', Age: 1 },
      { Id: 4, Name: 'B', Age: 2 },
    ]);
    const [delivery] = await delivered();
    expect(delivery.headers['content-type']).toBe('application/x-ndjson');
    expect(
      delivery.body
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { Id: 3, Name: 'A', Age: 1 },
      { Id: 4, Name: 'B', Age: 2 },
    ]);
  });

  test('Excel: a workbook the service can read back', async () => {
    const xlsx = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    await hook({ EventSelector: '/Person.Inserted', Headers: { 'Content-Type': xlsx } });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'A', Age: 1 });
    const [delivery] = await delivered();
    const { contentType } = service.protocols.forContentType(xlsx);
    expect(await contentType.read!(delivery.body, { params: {} })).toEqual([{ Id: 3, Name: 'A', Age: 1 }]);
  });

  test('a short binding (excel, jl) is sent as the real MIME type of its content type', async () => {
    await hook({ EventSelector: '/Person.Inserted', Headers: { 'Content-Type': 'excel' } });
    await hook({ EventSelector: '/Person.Inserted', Headers: { 'Content-Type': 'jl' } });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'A', Age: 1 });
    const types = (await delivered()).map((c) => c.headers['content-type']).sort();
    expect(types).toEqual(['application/jsonlines', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet']);
  });

  test('JSON with raw=false is still a bare array', async () => {
    await hook({ EventSelector: '/Person.Inserted', Headers: { 'Content-Type': 'application/json; raw=false' } });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'A', Age: 1 });
    await delivered();
    expect(receiver.json(0)).toEqual([{ Id: 3, Name: 'A', Age: 1 }]);
  });
});

describe("a binary payload is sent as-is with the event's Content-Type (SPEC 6.3.3)", () => {
  test('the webhook cannot change the Content-Type', async () => {
    service.defineEvent('Camera.Snapshot', { contentType: 'image/png' });
    await hook({ EventSelector: '/Camera.Snapshot', Headers: { 'Content-Type': 'application/json' } });
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    await service.raise('Camera.Snapshot', bytes);
    const calls = await delivered();
    expect(calls[0].headers['content-type']).toBe('image/png');
    expect(calls[0].body.equals(bytes)).toBe(true);
  });
});

describe('a CustomPayloadRequest replaces the payload (SPEC 2.4, 6.3.6, 7.5-7.6)', () => {
  const custom = (uri: string, more: Record<string, unknown> = {}) => ({
    EventSelector: '/Person.Updated',
    CustomPayloadRequest: { URI: uri, ...more },
  });
  const trigger = () => call(service, 'PATCH', '/Person/Id=2', { Age: 42 });

  test("its entities are sent as a JSON array instead of the event's", async () => {
    await hook(custom('/Person/Id=1/select=Name'));
    await trigger();
    await delivered();
    expect(receiver.json(0)).toEqual([{ Name: 'Ada Lovelace' }]);
  });

  test("its entities are written in the webhook's Content-Type", async () => {
    await hook({ ...custom('/Person/_/select=Id,Name'), Headers: { 'Content-Type': 'text/csv' } });
    await trigger();
    await delivered();
    expect(receiver.calls[0].body.toString()).toBe('1,Ada Lovelace\n2,Alan Turing');
  });

  test('BreakOnError true: an error response aborts the webhook request', async () => {
    await hook(custom('/Person/Age=old', { BreakOnError: true }));
    await trigger();
    expect(await delivered()).toEqual([]);
    const [row] = (await call(service, 'GET', '/Service.Admin.WebhookLog')).body;
    expect(row).toMatchObject({ Attempt: 1, Success: false, Status: null, Error: expect.stringMatching(/^Aborted: .*400/) });
  });

  test('BreakOnError false: the error message is sent as the body', async () => {
    await hook(custom('/Person/Age=old', { BreakOnError: false }));
    await trigger();
    await delivered();
    expect(receiver.json(0)).toMatchObject({ Status: 'fail', ErrorCode: 'InvalidConditionValueType' });
  });

  test('BreakOnNoContent true: a 204 aborts the webhook request', async () => {
    await hook(custom('/Person/Id=99', { BreakOnNoContent: true }));
    await trigger();
    expect(await delivered()).toEqual([]);
  });

  test('BreakOnNoContent false: a 204 sends an empty request', async () => {
    await hook(custom('/Person/Id=99', { BreakOnNoContent: false }));
    await trigger();
    const calls = await delivered();
    expect(calls).toHaveLength(1);
    expect(calls[0].body.length).toBe(0);
  });

  test('its Headers are its own: Authorization goes there when keys are required (SPEC 5.6)', async () => {
    const keyed = serviceWithPeople({ apiKeys: [{ key: 'k1' }] });
    const auth = { authorization: 'apikey k1' };
    await call(keyed, 'POST', '/Person', { Id: 1, Name: 'Ada' }, auth);
    await call(
      keyed,
      'POST',
      HOOKS,
      {
        Destination: `${receiver.url}/a`,
        EventSelector: '/Person.Updated',
        CustomPayloadRequest: { URI: '/Person/_/select=Name', Headers: { Authorization: 'apikey k1' }, BreakOnError: true },
      },
      auth,
    );
    await call(
      keyed,
      'POST',
      HOOKS,
      {
        Destination: `${receiver.url}/b`,
        EventSelector: '/Person.Updated',
        CustomPayloadRequest: { URI: '/Person/_/select=Name', BreakOnError: true },
      },
      auth,
    );
    await call(keyed, 'PATCH', '/Person/Id=1', { Age: 1 }, auth);
    await keyed.webhooks.idle();
    expect(receiver.calls.map((c) => c.path)).toEqual(['/a']);
    expect(receiver.json(0)).toEqual([{ Name: 'Ada' }]);
    await keyed.close();
  });
});

describe("a relative Destination runs in-process with the webhook's Headers (DESIGN 8)", () => {
  test('the payload is posted to the local resource', async () => {
    service.addResource({ name: 'Archive' });
    await hook({ Destination: '/Archive', EventSelector: '/Person.Inserted/Name=Copy%20Me' });
    await call(service, 'POST', '/Person', [
      { Id: 7, Name: 'Copy Me', Age: 30 },
      { Id: 8, Name: 'Not Me', Age: 30 },
    ]);
    await delivered();
    expect((await call(service, 'GET', '/Archive')).body).toEqual([{ Id: 7, Name: 'Copy Me', Age: 30 }]);
  });

  test('a local destination needs Authorization in Headers when keys are required (SPEC 5.5)', async () => {
    const keyed = serviceWithPeople({ apiKeys: [{ key: 'k1' }], webhooks: { retrySchedule: [0] } });
    keyed.addResource({ name: 'Archive' });
    const auth = { authorization: 'apikey k1' };
    await call(
      keyed,
      'POST',
      HOOKS,
      { Destination: '/Archive', EventSelector: '/Person.Inserted', Label: 'with', Headers: { Authorization: 'apikey k1' } },
      auth,
    );
    await call(keyed, 'POST', HOOKS, { Destination: '/Archive', EventSelector: '/Person.Inserted', Label: 'without' }, auth);
    await call(keyed, 'POST', '/Person', { Id: 1, Name: 'Ada' }, auth);
    await keyed.webhooks.idle();
    expect((await call(keyed, 'GET', '/Archive', undefined, auth)).body).toEqual([{ Id: 1, Name: 'Ada' }]);
    const log = (await call(keyed, 'GET', '/Service.Admin.WebhookLog/Status=401', undefined, auth)).body;
    expect(log).toHaveLength(1);
    await keyed.close();
  });

  test('a webhook that feeds its own event stops at the depth limit instead of looping forever', async () => {
    await hook({ Destination: '/Person', EventSelector: '/Person.Inserted', Headers: {} });
    const answer = await call(service, 'POST', '/Person', { Name: 'Echo' });
    expect(answer.status).toBe(201);
    await delivered();
    const copies = (await call(service, 'REPORT', '/Person/Name=Echo')).body;
    expect(copies).toBeGreaterThan(1);
    expect(copies).toBeLessThanOrEqual(18);
  });
});

describe('deliveries carry Standard Webhooks headers (DESIGN 8)', () => {
  test('text payloads (JSON, JSON Lines) verify with the official library as they are; binary ones (Excel) verify over their raw bytes', async () => {
    await hook({ EventSelector: '/Person.Inserted', Destination: `${receiver.url}/jl`, Secret: SECRET, Headers: { 'Content-Type': 'jl' } });
    await hook({
      EventSelector: '/Person.Inserted',
      Destination: `${receiver.url}/xlsx`,
      Secret: SECRET,
      Headers: { 'Content-Type': 'excel' },
    });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'Zoë', Age: 1 });
    const calls = await delivered();
    const jl = calls.find((c) => c.path === '/jl')!;
    const xlsx = calls.find((c) => c.path === '/xlsx')!;
    const headers = (c: typeof jl) => c.headers as Record<string, string>;
    expect(() => new StandardWebhook(SECRET).verify(jl.body, headers(jl))).not.toThrow();
    // The library turns a Buffer into UTF-8 text before it signs, which changes a ZIP's bytes.
    expect(() => new StandardWebhook(SECRET).verify(xlsx.body, headers(xlsx))).toThrow();
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const signed = Buffer.concat([Buffer.from(`${xlsx.headers['webhook-id']}.${xlsx.headers['webhook-timestamp']}.`), xlsx.body]);
    const expected = `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
    expect(String(xlsx.headers['webhook-signature']).split(' ')).toContain(expected);
  });

  test('webhook-id and webhook-timestamp always; webhook-signature when a Secret is set', async () => {
    await hook({ EventSelector: '/Person.Inserted', Destination: `${receiver.url}/plain` });
    await hook({ EventSelector: '/Person.Inserted', Destination: `${receiver.url}/signed`, Secret: SECRET });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'Signed', Age: 1 });
    const calls = await delivered();
    const plain = calls.find((c) => c.path === '/plain')!;
    const signed = calls.find((c) => c.path === '/signed')!;
    expect(plain.headers['webhook-id']).toMatch(/^msg_/);
    expect(Number(plain.headers['webhook-timestamp'])).toBeGreaterThan(1_600_000_000);
    expect(plain.headers['webhook-signature']).toBeUndefined();
    expect(signed.headers['webhook-id']).not.toBe(plain.headers['webhook-id']);
    const verified = new StandardWebhook(SECRET).verify(signed.body.toString(), signed.headers as Record<string, string>);
    expect(verified).toEqual([{ Id: 3, Name: 'Signed', Age: 1 }]);
  });

  test('a tampered body fails verification', async () => {
    await hook({ EventSelector: '/Person.Inserted', Secret: SECRET });
    await call(service, 'POST', '/Person', { Id: 3, Name: 'Signed', Age: 1 });
    const [signed] = await delivered();
    expect(() =>
      new StandardWebhook(SECRET).verify(signed.body.toString().replace('Signed', 'Forged'), signed.headers as Record<string, string>),
    ).toThrow();
  });
});

describe('delivery never blocks or fails the request that raised the event', () => {
  test('the raising request answers while the receiver is still holding the delivery', async () => {
    receiver.hang = true;
    await hook({ EventSelector: '/Person.Inserted' });
    const answer = await call(service, 'POST', '/Person', { Id: 3, Name: 'Fast', Age: 1 });
    expect(answer.status).toBe(201);
    await receiver.waitFor(1);
  });
});
