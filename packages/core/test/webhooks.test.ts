import { createService, type Service } from '@resourcery/core';
import { call, serviceWithPeople } from './webhook-receiver';

const HOOKS = '/Service.Admin.Webhook';
const OUTPUT_KEYS = ['Id', 'Label', 'Method', 'Destination', 'EventSelector', 'Headers', 'IsPaused', 'CustomPayloadRequest'];

let service: Service;
beforeEach(() => {
  service = serviceWithPeople();
});
afterEach(() => service.close());

describe('Service.Admin.Webhook is an ordinary entity resource (SPEC 2)', () => {
  test('it is listed with every method', async () => {
    const listing = await call(service, 'GET', '/Service.AvailableResource/Name=Service.Admin.Webhook');
    expect(listing.body[0]).toMatchObject({ Kind: 'EntityResource' });
    expect([...listing.body[0].Methods].sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'REPORT']);
  });

  test('the attempt log allows GET, DELETE, REPORT and HEAD only', async () => {
    const listing = await call(service, 'GET', '/Service.AvailableResource/Name=Service.Admin.WebhookLog');
    expect([...listing.body[0].Methods].sort()).toEqual(['DELETE', 'GET', 'HEAD', 'REPORT']);
    expect((await call(service, 'POST', '/Service.Admin.WebhookLog', { Attempt: 1 })).status).toBe(405);
  });
});

describe('a webhook gets its defaults and a generated, read-only Id (DESIGN 8)', () => {
  test('defaults: Method POST, Headers {}, IsPaused false, CustomPayloadRequest null, in SPEC 2.3 key order', async () => {
    const created = await call(service, 'POST', HOOKS, { Destination: 'http://127.0.0.1:9/x', EventSelector: '/Person.Inserted' });
    expect(created.status).toBe(201);
    const [hook] = (await call(service, 'GET', HOOKS)).body;
    expect(Object.keys(hook)).toEqual(OUTPUT_KEYS);
    expect(hook).toEqual({
      Id: expect.any(String),
      Label: null,
      Method: 'POST',
      Destination: 'http://127.0.0.1:9/x',
      EventSelector: '/Person.Inserted',
      Headers: {},
      IsPaused: false,
      CustomPayloadRequest: null,
    });
  });

  test('an Id in the input is ignored on insert and kept on update', async () => {
    const created = await call(service, 'POST', HOOKS, { Id: 'mine', Destination: '/Person', EventSelector: '/Person.Deleted' });
    const id = created.body[0].Id;
    expect(id).not.toBe('mine');
    const patched = await call(service, 'PATCH', `${HOOKS}/Id=${id}`, { Id: 'other', Label: 'renamed' });
    expect(patched.body[0]).toMatchObject({ Id: id, Label: 'renamed' });
  });

  test('property names are case-insensitive and a PATCH spelling wins over the stored one', async () => {
    await call(service, 'POST', HOOKS, { destination: '/Person', eventselector: '/Person.Deleted', method: 'put', label: 'a' });
    const patched = await call(service, 'PATCH', `${HOOKS}/Label=a`, { ispaused: true });
    expect(patched.body[0]).toMatchObject({ Method: 'PUT', IsPaused: true, Label: 'a' });
  });

  test('a CustomPayloadRequest gets Method GET and its defaults, in SPEC 2.4 key order', async () => {
    await call(service, 'POST', HOOKS, {
      Destination: '/Person',
      EventSelector: '/Person.Deleted',
      CustomPayloadRequest: { uri: '/Person/Id=1' },
    });
    const [hook] = (await call(service, 'GET', HOOKS)).body;
    expect(Object.keys(hook.CustomPayloadRequest)).toEqual(['Method', 'URI', 'Headers', 'Body', 'BreakOnError', 'BreakOnNoContent']);
    expect(hook.CustomPayloadRequest).toEqual({
      Method: 'GET',
      URI: '/Person/Id=1',
      Headers: {},
      Body: null,
      BreakOnError: false,
      BreakOnNoContent: false,
    });
  });
});

describe('the Secret is write-only', () => {
  const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

  test('it is stored but never output, and survives a PATCH that does not mention it', async () => {
    const created = await call(service, 'POST', HOOKS, {
      Destination: '/Person',
      EventSelector: '/Person.Deleted',
      Secret: secret,
      Label: 's',
    });
    expect(JSON.stringify(created.body)).not.toContain('whsec_');
    await call(service, 'PATCH', `${HOOKS}/Label=s`, { IsPaused: true });
    const get = await call(service, 'GET', HOOKS);
    expect(get.body[0]).not.toHaveProperty('Secret');
    expect(JSON.stringify(get.body)).not.toContain(secret.slice(6));
    const { entities } = await service.resources
      .find('Service.Admin.Webhook')!
      .storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 });
    expect([...(entities as Iterable<Record<string, unknown>>)][0].Secret).toBe(secret);
  });

  test('conditions and searches cannot probe it', async () => {
    await call(service, 'POST', HOOKS, { Destination: '/Person', EventSelector: '/Person.Deleted', Secret: secret });
    expect((await call(service, 'GET', `${HOOKS}/Secret>whsec_`)).status).toBe(404);
    expect((await call(service, 'GET', `${HOOKS}/_/search=whsec_`)).status).toBe(204);
  });

  test('a secret that is not base64 is refused', async () => {
    const answer = await call(service, 'POST', HOOKS, {
      Destination: '/Person',
      EventSelector: '/Person.Deleted',
      Secret: 'whsec_not base64!',
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ ErrorCode: 'InvalidResourceEntity', Data: { Secret: expect.any(String) } });
  });
});

describe('credentials in Headers are masked in output and kept when the masked value comes back', () => {
  test('Authorization is shown as *****, other headers as they are; a PUT of the GET output keeps the key', async () => {
    const hook = {
      Label: 'k',
      Destination: '/Person',
      EventSelector: '/Person.Deleted',
      Headers: { Authorization: 'apikey k-123', 'X-Team': 'blue' },
      CustomPayloadRequest: { URI: '/Person', Headers: { authorization: 'apikey k-456' } },
    };
    const created = await call(service, 'POST', HOOKS, hook);
    expect(created.body[0].Headers).toEqual({ Authorization: '*****', 'X-Team': 'blue' });
    expect(JSON.stringify((await call(service, 'GET', HOOKS)).body)).not.toMatch(/k-123|k-456/);

    const [shown] = (await call(service, 'GET', HOOKS)).body;
    await call(service, 'PUT', `${HOOKS}/Label=k`, { ...shown, Headers: { ...shown.Headers, 'X-Team': 'red' } });
    const { entities } = await service.resources
      .find('Service.Admin.Webhook')!
      .storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 });
    const stored = [...(entities as Iterable<any>)][0];
    expect(stored.Headers).toEqual({ Authorization: 'apikey k-123', 'X-Team': 'red' });
    expect(stored.CustomPayloadRequest.Headers).toEqual({ authorization: 'apikey k-456' });
  });

  test('a new value replaces the stored credential', async () => {
    await call(service, 'POST', HOOKS, {
      Label: 'k',
      Destination: '/Person',
      EventSelector: '/Person.Deleted',
      Headers: { Authorization: 'apikey old' },
    });
    await call(service, 'PATCH', `${HOOKS}/Label=k`, { Headers: { Authorization: 'apikey new' } });
    const { entities } = await service.resources
      .find('Service.Admin.Webhook')!
      .storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 });
    expect([...(entities as Iterable<any>)][0].Headers).toEqual({ Authorization: 'apikey new' });
  });
});

describe('bad webhooks are refused with 400 InvalidResourceEntity naming the property', () => {
  const valid = { Destination: '/Person', EventSelector: '/Person.Inserted' };
  test.each([
    ['Destination', { EventSelector: '/Person.Inserted' }],
    ['Destination', { ...valid, Destination: 'ftp://example.com/x' }],
    ['Destination', { ...valid, Destination: 'https://user:pw@example.com/x' }],
    ['Destination', { ...valid, Destination: '/NoSuchResource' }],
    ['Destination', { ...valid, Destination: '/Person.Inserted' }],
    ['Method', { ...valid, Method: 'TRACE' }],
    ['Label', { ...valid, Label: 7 }],
    ['Headers', { ...valid, Headers: ['X'] }],
    ['Headers', { ...valid, Headers: { 'X-Count': 3 } }],
    ['Headers', { ...valid, Headers: { 'Bad Name': 'x' } }],
    ['Headers', { ...valid, Headers: { 'Content-Length': '3' } }],
    ['Headers', { ...valid, Headers: { 'Content-Type': 'application/x-unknown' } }],
    ['IsPaused', { ...valid, IsPaused: 'yes' }],
    ['Colour', { ...valid, Colour: 'red' }],
    ['CustomPayloadRequest', { ...valid, CustomPayloadRequest: 'GET /Person' }],
    ['CustomPayloadRequest.URI', { ...valid, CustomPayloadRequest: { URI: 'https://example.com/data' } }],
    ['CustomPayloadRequest.Method', { ...valid, CustomPayloadRequest: { URI: '/Person', Method: 'POST' } }],
    ['CustomPayloadRequest.Body', { ...valid, CustomPayloadRequest: { URI: '/Person', Body: [1] } }],
    ['CustomPayloadRequest.BreakOnError', { ...valid, CustomPayloadRequest: { URI: '/Person', BreakOnError: 'no' } }],
  ])('%s: %j', async (property, body) => {
    const answer = await call(service, 'POST', HOOKS, body);
    expect(answer.status).toBe(400);
    expect(answer.body.ErrorCode).toBe('InvalidResourceEntity');
    expect(Object.keys(answer.body.Data)).toEqual([property]);
    expect((await call(service, 'REPORT', HOOKS)).body).toBe(0);
  });
});

describe('the EventSelector is checked on save: 400 InvalidEventSelector (SPEC 6.2)', () => {
  test.each([
    ['meta-conditions', '/Person.Inserted/Age>50/limit=1'],
    ['an entity resource', '/Person'],
    ['an unknown event', '/Person.Renamed'],
    ['a macro', '/$elders'],
    ['a bad operator', '/Person.Inserted/Age=>5'],
    ['an unknown property of a typed payload', '/Person.Inserted/Height>2'],
    ['a value of the wrong type', '/Person.Inserted/Age=old'],
    ['nothing', ''],
  ])('%s: %s', async (_, selector) => {
    const answer = await call(service, 'POST', HOOKS, { Destination: '/Person', EventSelector: selector });
    expect(answer.status).toBe(400);
    expect(answer.body.ErrorCode).toBe('InvalidEventSelector');
  });

  test('conditions on a binary event are refused: it has no entities', async () => {
    service.defineEvent('Camera.Snapshot', { contentType: 'image/jpeg' });
    const answer = await call(service, 'POST', HOOKS, { Destination: '/Person', EventSelector: '/Camera.Snapshot/Size>3' });
    expect(answer.body.ErrorCode).toBe('InvalidEventSelector');
    expect((await call(service, 'POST', HOOKS, { Destination: '/Person', EventSelector: '/Camera.Snapshot' })).status).toBe(201);
  });

  test('dotted locators, null checks, `_` and a missing leading slash are fine; the event is stored by its full name', async () => {
    for (const selector of [
      '/Person.Inserted/Name.Length>10',
      '/Person.Inserted/Email!=null&Address.City=Paris',
      '/person.inserted/_',
      'Person.Updated',
    ]) {
      const answer = await call(service, 'POST', HOOKS, { Destination: '/Person', EventSelector: selector });
      expect(answer.status).toBe(201);
    }
    const stored = (await call(service, 'GET', `${HOOKS}/_/select=EventSelector`)).body.map(
      (h: { EventSelector: string }) => h.EventSelector,
    );
    expect(stored.slice(2)).toEqual(['/Person.Inserted/_', '/Person.Updated']);
  });
});

describe('absolute destinations to private addresses are refused on save: 400 InvalidDestination (DESIGN 8)', () => {
  let guarded: Service;
  beforeEach(() => {
    guarded = createService();
    guarded.defineEvent('Ping');
  });
  afterEach(() => guarded.close());

  test.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://api.localhost/hook',
    'http://LOCALHOST./hook',
    'http://10.1.2.3/hook',
    'http://172.16.0.1/hook',
    'http://192.168.1.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://metadata.google.internal/computeMetadata/v1',
    'http://100.100.100.200/',
    'http://0.0.0.0/',
    'http://2130706433/',
    'http://[::1]/hook',
    'http://[fe80::1]/hook',
    'http://[fd00:ec2::254]/',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::]/hook',
  ])('%s', async (destination) => {
    const answer = await call(guarded, 'POST', HOOKS, { Destination: destination, EventSelector: '/Ping' });
    expect(answer.status).toBe(400);
    expect(answer.body.ErrorCode).toBe('InvalidDestination');
  });

  test('public addresses and names are accepted', async () => {
    for (const destination of ['https://hooks.example.com/in', 'http://93.184.216.34/in', 'https://[2606:4700::1111]/in']) {
      expect((await call(guarded, 'POST', HOOKS, { Destination: destination, EventSelector: '/Ping' })).status).toBe(201);
    }
  });

  test('allowPrivateDestinations lets them through', async () => {
    const open = createService({ allowPrivateDestinations: true });
    open.defineEvent('Ping');
    expect((await call(open, 'POST', HOOKS, { Destination: 'http://localhost:1/hook', EventSelector: '/Ping' })).status).toBe(201);
    await open.close();
  });
});
