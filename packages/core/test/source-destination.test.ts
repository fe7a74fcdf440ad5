import { createService, type Service } from '@resourcery/core';
import { parseHeaderRequest } from '../src/outgoing/source-destination';
import { call, Receiver, serviceWithPeople } from './webhook-receiver';

let service: Service;
let receiver: Receiver;
beforeEach(async () => {
  receiver = await Receiver.start();
  service = serviceWithPeople();
  service.addResource({ name: 'Archive' });
  await call(service, 'POST', '/Person', [
    { Id: 1, Name: 'Ada', Age: 36 },
    { Id: 2, Name: 'Alan', Age: 41 },
    { Id: 3, Name: 'Grace', Age: 85 },
  ]);
});
afterEach(async () => {
  await service.close();
  await receiver.close();
});

describe('Source and Destination headers read <METHOD> <uri> [Header: value]... (DESIGN 4)', () => {
  test('bracketed headers', () => {
    expect(parseHeaderRequest('GET https://example.com/data [Authorization: apikey a b][X-Tag:  t ]', 'Source')).toEqual({
      method: 'GET',
      uri: 'https://example.com/data',
      headers: { authorization: 'apikey a b', 'x-tag': 't' },
    });
  });

  test('plain headers, a lower-case method, no headers', () => {
    expect(parseHeaderRequest('post /Archive Content-Type: application/json X-Tag: a: b', 'Destination')).toEqual({
      method: 'POST',
      uri: '/Archive',
      headers: { 'content-type': 'application/json', 'x-tag': 'a: b' },
    });
    expect(parseHeaderRequest('  GET   /Person/Age>30  ', 'Source')).toEqual({ method: 'GET', uri: '/Person/Age>30', headers: {} });
  });

  test.each(['', 'GET', '/Person', 'FETCH /Person', 'GET /Person [broken', 'GET /Person junk'])('%j is refused', (value) => {
    expect(() => parseHeaderRequest(value, 'Source')).toThrow(expect.objectContaining({ code: 'InvalidSource' }));
  });
});

describe('Source gives a POST, PUT or PATCH its body from a GET (SPEC 4.3, DESIGN 4)', () => {
  test('a local source: the entities it selects are inserted', async () => {
    const answer = await call(service, 'POST', '/Archive', undefined, { source: 'GET /Person/Age>40/select=Id,Name' });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual([
      { Id: 2, Name: 'Alan' },
      { Id: 3, Name: 'Grace' },
    ]);
  });

  test("a local source runs with the caller's own key", async () => {
    const keyed = serviceWithPeople({ apiKeys: [{ key: 'k1' }] });
    keyed.addResource({ name: 'Archive' });
    const auth = { authorization: 'apikey k1' };
    await call(keyed, 'POST', '/Person', { Id: 1, Name: 'Ada' }, auth);
    const answer = await call(keyed, 'POST', '/Archive', undefined, { ...auth, source: 'GET /Person' });
    expect(answer.status).toBe(201);
    await keyed.close();
  });

  test('a remote source with headers', async () => {
    receiver.reply = { status: 200, contentType: 'application/json', body: JSON.stringify([{ Id: 9, Name: 'Remote' }]) };
    const answer = await call(service, 'POST', '/Archive', undefined, { source: `GET ${receiver.url}/export [X-Key: abc]` });
    expect(answer.status).toBe(201);
    expect(receiver.calls[0]).toMatchObject({ method: 'GET', path: '/export' });
    expect(receiver.calls[0].headers['x-key']).toBe('abc');
    expect((await call(service, 'GET', '/Archive')).body).toEqual([{ Id: 9, Name: 'Remote' }]);
  });

  test('PATCH takes its one entity from the source', async () => {
    receiver.reply = { status: 200, contentType: 'application/json; charset=utf-8', body: '{"Age":37}' };
    const answer = await call(service, 'PATCH', '/Person/Id=1', undefined, { source: `GET ${receiver.url}/age` });
    expect(answer.body).toEqual([{ Id: 1, Name: 'Ada', Age: 37 }]);
  });

  test('safepost with a source inserts or updates by the given properties', async () => {
    await call(service, 'POST', '/Archive', { Id: 1, Name: 'Old name' });
    const answer = await call(service, 'POST', '/Archive/_/safepost=Id', undefined, {
      source: 'GET /Person/Id<3/select=Id,Name',
      accept: 'application/json',
    });
    expect(answer.body).toMatchObject({ InsertedCount: 1, UpdatedCount: 1 });
    expect((await call(service, 'GET', '/Archive/_/order_asc=Id')).body).toEqual([
      { Id: 1, Name: 'Ada' },
      { Id: 2, Name: 'Alan' },
    ]);
  });

  test('a source that selects nothing inserts nothing', async () => {
    const answer = await call(service, 'POST', '/Archive', undefined, { source: 'GET /Person/Age>100', accept: 'application/json' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ InsertedCount: 0 });
  });
});

describe('Source failures are 400 InvalidSource or InvalidSourceData', () => {
  test.each([
    ['a method other than GET', 'POST /Person', 'InvalidSource'],
    ['an unknown local resource', 'GET /Nobody', 'InvalidSource'],
    ['neither local nor absolute', 'GET Person', 'InvalidSource'],
    ['an unsupported scheme', 'GET file:///etc/passwd', 'InvalidSource'],
  ])('%s', async (_, source, code) => {
    const answer = await call(service, 'POST', '/Archive', undefined, { source });
    expect(answer.status).toBe(400);
    expect(answer.body.ErrorCode).toBe(code);
    expect((await call(service, 'REPORT', '/Archive')).body).toBe(0);
  });

  test('a remote error answer', async () => {
    receiver.status = 503;
    const answer = await call(service, 'POST', '/Archive', undefined, { source: `GET ${receiver.url}/x` });
    expect(answer.body).toMatchObject({ ErrorCode: 'InvalidSource', Message: expect.stringMatching(/503/) });
  });

  test('data that cannot be read', async () => {
    receiver.reply = { status: 200, contentType: 'application/json', body: '{not json' };
    expect((await call(service, 'POST', '/Archive', undefined, { source: `GET ${receiver.url}/x` })).body.ErrorCode).toBe(
      'InvalidSourceData',
    );
    receiver.reply = { status: 200, contentType: 'application/x-unknown', body: 'x' };
    expect((await call(service, 'POST', '/Archive', undefined, { source: `GET ${receiver.url}/x` })).body.ErrorCode).toBe(
      'InvalidSourceData',
    );
    receiver.reply = { status: 200, contentType: 'application/json', body: '[1,2]' };
    expect((await call(service, 'POST', '/Archive', undefined, { source: `GET ${receiver.url}/x` })).body.ErrorCode).toBe(
      'InvalidSourceData',
    );
  });

  test('a receiver that is down', async () => {
    const down = await Receiver.start();
    await down.close();
    expect((await call(service, 'POST', '/Archive', undefined, { source: `GET ${down.url}/x` })).body.ErrorCode).toBe('InvalidSource');
  });

  test('a private address, unless the service allows private destinations', async () => {
    const strict = createService();
    strict.addResource({ name: 'Archive' });
    receiver.reply = { status: 200, contentType: 'application/json', body: '[{"A":1}]' };
    for (const source of [`GET ${receiver.url}/x`, 'GET http://localhost:1/x', 'GET http://169.254.169.254/latest']) {
      const answer = await call(strict, 'POST', '/Archive', undefined, { source });
      expect(answer.body).toMatchObject({ ErrorCode: 'InvalidSource', Message: expect.stringMatching(/refused/) });
    }
    expect(receiver.calls).toEqual([]);
    await strict.close();
  });
});

describe('credentials written in Source and Destination never reach messages or error records', () => {
  test.each([
    ['source', 'POST', 'GET /Nope [Authorization: apikey admin-secret]'],
    ['source', 'POST', 'GET /Nope Authorization: Bearer partner-token'],
    ['destination', 'GET', 'PUT not-a-url [Cookie: sid=s3cr3t]'],
  ])('%s: %s', async (header, method, value) => {
    const answer = await call(service, method, method === 'POST' ? '/Archive' : '/Person', undefined, { [header]: value });
    expect(answer.status).toBe(400);
    const record = await call(service, 'GET', answer.body.MoreInfoAt);
    const text = JSON.stringify([answer.body, record.body]);
    expect(text).not.toMatch(/admin-secret|partner-token|s3cr3t/);
    expect(record.body[0].Headers).toContain(`${header}: `);
  });
});

describe("Destination sends a GET's result and answers with the destination's answer (DESIGN 4)", () => {
  test('a local destination receives the selected entities', async () => {
    const answer = await call(service, 'GET', '/Person/Age>40/select=Id,Name', undefined, {
      destination: 'POST /Archive [Accept: application/json;raw=true]',
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual([
      { Id: 2, Name: 'Alan' },
      { Id: 3, Name: 'Grace' },
    ]);
    expect((await call(service, 'REPORT', '/Archive')).body).toBe(2);
  });

  test('a remote destination gets a JSON array with its headers; its answer is returned as-is', async () => {
    receiver.reply = { status: 202, contentType: 'text/plain', body: 'queued' };
    const response = await service.handle({
      method: 'GET',
      uri: '/Person/Id=1',
      headers: { destination: `PUT ${receiver.url}/import [X-Key: abc]` },
    });
    expect(response.status).toBe(202);
    expect(response.headers['content-type']).toBe('text/plain');
    expect(Buffer.from(response.body as Uint8Array).toString()).toBe('queued');
    expect(receiver.calls[0]).toMatchObject({ method: 'PUT', path: '/import' });
    expect(receiver.calls[0].headers['x-key']).toBe('abc');
    expect(receiver.calls[0].headers['content-type']).toMatch(/^application\/json/);
    expect(receiver.json(0)).toEqual([{ Id: 1, Name: 'Ada', Age: 36 }]);
  });

  test("a failing local destination's ErrorInfo link is passed on with its status and body", async () => {
    const response = await service.handle({ method: 'GET', uri: '/Person/Id=1', headers: { destination: 'POST /Nowhere' } });
    expect(response.status).toBe(404);
    const body = JSON.parse(Buffer.from(response.body as Uint8Array).toString());
    expect(response.headers.errorinfo).toBe(body.MoreInfoAt);
    expect(response.headers.errorinfo).toMatch(/^\/Service\.Admin\.Error\/id=/);
  });

  test("a remote destination's redirect keeps its Location, and its ErrorInfo is passed on", async () => {
    receiver.reply = {
      status: 303,
      contentType: 'text/plain',
      body: 'see other',
      headers: { location: 'https://example.org/imports/7', errorinfo: 'https://example.org/errors/1' },
    };
    const response = await service.handle({ method: 'GET', uri: '/Person/Id=1', headers: { destination: `POST ${receiver.url}/import` } });
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('https://example.org/imports/7');
    expect(response.headers.errorinfo).toBe('https://example.org/errors/1');
  });

  test('a destination with safepost upserts on every call', async () => {
    const destination = 'POST /Archive/_/safepost=Id';
    await call(service, 'GET', '/Person/Id=1', undefined, { destination });
    await call(service, 'PATCH', '/Person/Id=1', { Name: 'Ada L.' });
    await call(service, 'GET', '/Person/Id=1', undefined, { destination });
    expect((await call(service, 'GET', '/Archive')).body).toEqual([{ Id: 1, Name: 'Ada L.', Age: 36 }]);
  });

  test('only a GET is forwarded; other methods ignore the header', async () => {
    const answer = await call(service, 'POST', '/Person', { Id: 4, Name: 'Edsger' }, { destination: `POST ${receiver.url}/x` });
    expect(answer.status).toBe(201);
    expect(receiver.calls).toEqual([]);
  });

  test.each([
    ['bad syntax', () => 'SEND'],
    ['an unreachable receiver', () => 'POST http://127.0.0.1:1/x'],
    ['an unwritable Content-Type', () => `POST ${receiver.url}/x [Content-Type: application/x-unknown]`],
  ])('%s is 400 InvalidDestination', async (_, destination) => {
    const answer = await call(service, 'GET', '/Person', undefined, { destination: destination() });
    expect(answer.status).toBe(400);
    expect(answer.body.ErrorCode).toBe('InvalidDestination');
  });

  test('a private address is refused without allowPrivateDestinations', async () => {
    const strict = createService();
    strict.addResource({ name: 'Person' });
    await call(strict, 'POST', '/Person', { Id: 1 });
    const answer = await call(strict, 'GET', '/Person', undefined, { destination: `POST ${receiver.url}/x` });
    expect(answer.body).toMatchObject({ ErrorCode: 'InvalidDestination', Message: expect.stringMatching(/loopback/) });
    expect(receiver.calls).toEqual([]);
    await strict.close();
  });
});
