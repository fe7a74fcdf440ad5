import { createService, type PlainResponse, type Service, type ServiceOptions } from '@resourcery/core';
import { call, RAW } from './handle-support';
import { SseReader } from './sse-support';

const STREAM = { accept: 'text/event-stream' };
const services: Service[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
});

function people(options: ServiceOptions = {}): Service {
  const service = createService(options);
  services.push(service);
  service.addResource({
    name: 'Person',
    key: 'Id',
    schema: { type: 'object', properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: 'integer' } } },
  });
  return service;
}

async function subscribe(service: Service, uri: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const res = await service.handle({ method: 'GET', uri, headers: { ...STREAM, ...headers } });
  expect(res.status).toBe(200);
  const reader = new SseReader(res.body as AsyncIterable<string>);
  // Every stream opens with a comment, so the adapters flush the headers at once.
  expect(await reader.nextAny()).toEqual({ comment: 'ok' });
  return reader;
}

async function open(service: Service, uri: string, headers: Record<string, string> = {}): Promise<PlainResponse> {
  return service.handle({ method: 'GET', uri, headers: { ...STREAM, ...headers } });
}

describe('GET /<EventResource> with Accept: text/event-stream', () => {
  test('answers a stream of Server-Sent Events: id, the event name, the entities as a JSON array', async () => {
    const service = people();
    const res = await open(service, '/Person.Inserted');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    const reader = new SseReader(res.body as AsyncIterable<string>);
    await call(service, 'POST', '/Person', { body: [{ Id: 1, Name: 'ann', Age: 30 }] });
    await call(service, 'POST', '/Person', { body: { Id: 2, Name: 'bob', Age: 40 } });
    const first = await reader.nextJson();
    expect(first).toEqual({ id: expect.any(String), event: 'Person.Inserted', data: [{ Id: 1, Name: 'ann', Age: 30 }] });
    const second = await reader.nextJson();
    expect(second.data).toEqual([{ Id: 2, Name: 'bob', Age: 40 }]);
    expect(second.id).not.toBe(first.id);
    await reader.close();
  });

  test('without that Accept an event resource stays 405, and the listing keeps Methods: []', async () => {
    const service = people();
    const res = await call(service, 'GET', '/Person.Inserted');
    expect([res.status, res.json.ErrorCode]).toEqual([405, 'MethodNotAllowed']);
    expect((await call(service, 'GET', '/Person.Inserted', { headers: { accept: 'text/event-stream;q=0, */*' } })).status).toBe(405);
    expect((await call(service, 'HEAD', '/Person.Inserted', { headers: STREAM })).status).toBe(405);
    const listed = await call(service, 'GET', '/Service.AvailableResource/Name=Person.Inserted/select=Methods', { headers: RAW });
    expect(listed.json).toEqual([{ Methods: [] }]);
    // An entity resource with that Accept is a GET as before (406: no such content type).
    expect((await call(service, 'GET', '/Person', { headers: STREAM })).status).toBe(406);
  });

  test('conditions select entities as a webhook selector does: only matching events, only the matching entities', async () => {
    const service = people();
    const reader = await subscribe(service, '/Person.Inserted/Age>35');
    await call(service, 'POST', '/Person', { body: [{ Id: 1, Name: 'young', Age: 20 }] });
    await call(service, 'POST', '/Person', {
      body: [
        { Id: 2, Name: 'old', Age: 50 },
        { Id: 3, Name: 'young too', Age: 21 },
      ],
    });
    expect((await reader.nextJson()).data).toEqual([{ Id: 2, Name: 'old', Age: 50 }]);
    const dotted = await subscribe(service, '/person.updated/Name=bob');
    await call(service, 'PATCH', '/Person/Id=1', { body: { Name: 'bob' } });
    expect(await dotted.nextJson()).toMatchObject({ event: 'Person.Updated', data: [{ Id: 1, Name: 'bob' }] });
  });

  test('alternatives (|) and IN lists select as in a GET: Name=ann|bob, Id=1|3, Age<18|>65', async () => {
    const service = people();
    const names = await subscribe(service, '/Person.Inserted/Name=ann|bob');
    const ids = await subscribe(service, '/Person.Inserted/Id=1|3');
    const ages = await subscribe(service, '/Person.Inserted/Age<18|>65&Name!=cy');
    await call(service, 'POST', '/Person', {
      body: [
        { Id: 1, Name: 'ann', Age: 10 },
        { Id: 2, Name: 'bob', Age: 40 },
        { Id: 3, Name: 'cy', Age: 70 },
        { Id: 4, Name: 'dee', Age: 80 },
      ],
    });
    const ided = (reader: SseReader) => reader.nextJson().then((m) => m.data.map((e: { Id: number }) => e.Id));
    expect(await ided(names)).toEqual([1, 2]);
    expect(await ided(ids)).toEqual([1, 3]);
    expect(await ided(ages)).toEqual([1, 4]);
    // The same selectors in a GET select the same entities.
    for (const [conditions, expected] of [
      ['Name=ann|bob', [1, 2]],
      ['Id=1|3', [1, 3]],
      ['Age<18|>65&Name!=cy', [1, 4]],
    ] as const) {
      const got = await call(service, 'GET', `/Person/${conditions}/order_asc=Id&select=Id`, { headers: RAW });
      expect(got.json.map((e: { Id: number }) => e.Id)).toEqual(expected);
    }
    await Promise.all([names.close(), ids.close(), ages.close()]);
  });

  test('a selector that is not one is 400 InvalidEventSelector; an unknown event 404', async () => {
    const service = people();
    const meta = await call(service, 'GET', '/Person.Inserted/_/limit=1', { headers: STREAM });
    expect([meta.status, meta.json.ErrorCode]).toEqual([400, 'InvalidEventSelector']);
    const unknown = await call(service, 'GET', '/Nothing.Here', { headers: STREAM });
    expect(unknown.status).toBe(404);
  });

  test('a binary event is sent as {"ContentType":...,"Base64":...}', async () => {
    const service = people();
    service.defineEvent('Camera.Snapshot', { contentType: 'image/png' });
    const reader = await subscribe(service, '/Camera.Snapshot');
    await service.raise('Camera.Snapshot', new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    await service.raise('Camera.Snapshot', { body: 'text', contentType: 'text/plain' });
    expect(await reader.nextJson()).toMatchObject({ event: 'Camera.Snapshot', data: { ContentType: 'image/png', Base64: 'iVBORw==' } });
    expect((await reader.nextJson()).data).toEqual({ ContentType: 'text/plain', Base64: Buffer.from('text').toString('base64') });
  });

  test('events the app raises itself stream as well', async () => {
    const service = people();
    service.defineEvent('Sensor.Reading');
    const reader = await subscribe(service, '/Sensor.Reading/Celsius>=30');
    await service.raise('Sensor.Reading', [
      { Sensor: 'a', Celsius: 12 },
      { Sensor: 'b', Celsius: 40 },
    ]);
    expect((await reader.nextJson()).data).toEqual([{ Sensor: 'b', Celsius: 40 }]);
  });

  test('service.fetch answers with the headers at once and streams the body', async () => {
    const service = people();
    const response = await service.fetch(new Request('http://x/api/Person.Deleted', { headers: STREAM }), { basePath: '/api' });
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    const reader = new SseReader(response.body as unknown as AsyncIterable<Uint8Array>);
    expect(await reader.nextAny()).toEqual({ comment: 'ok' });
    await call(service, 'POST', '/Person', { body: { Id: 1, Name: 'ann' } });
    await call(service, 'DELETE', '/Person/Id=1');
    expect(await reader.nextJson()).toMatchObject({ event: 'Person.Deleted', data: [{ Id: 1, Name: 'ann' }] });
    await reader.close();
    expect(service.streams.opened()).toBe(0);
  });

  test('closing the service ends its streams', async () => {
    const service = people();
    const reader = await subscribe(service, '/Person.Inserted');
    await service.close();
    expect(await reader.next()).toBeUndefined();
  });
});

describe('who sees what', () => {
  const KEYS = {
    apiKeys: [
      { key: 'all-key-123' },
      { key: 'person-key-1', allow: [{ resources: ['Person'], methods: ['GET'] }] },
      { key: 'orders-key-1', allow: [{ resources: ['Order*'] }] },
    ],
  };

  test('the caller must authenticate (401), and needs GET on the event resource\u2019s entity resource (403)', async () => {
    const service = people(KEYS);
    expect((await call(service, 'GET', '/Person.Inserted', { headers: STREAM })).status).toBe(401);
    const forbidden = await call(service, 'GET', '/Person.Inserted', { headers: { ...STREAM, authorization: 'apikey orders-key-1' } });
    expect([forbidden.status, forbidden.json.ErrorCode]).toEqual([403, 'Forbidden']);
    // A key that may only GET Person may subscribe to Person's events; Basic carries the key too.
    const basic = `Basic ${Buffer.from(':person-key-1').toString('base64')}`;
    const reader = await subscribe(service, '/Person.Inserted', { authorization: basic });
    await call(service, 'POST', '/Person', { body: { Id: 1, Name: 'ann' }, headers: { authorization: 'apikey all-key-123' } });
    expect((await reader.nextJson()).data).toEqual([{ Id: 1, Name: 'ann' }]);
  });

  test('the resource\u2019s allow rule is asked with the subscriber and GET', async () => {
    const service = createService();
    services.push(service);
    service.addResource({ name: 'Secret', rules: { allow: (caller, method) => caller.context?.admin === true || method !== 'GET' } });
    expect((await service.handle({ method: 'GET', uri: '/Secret.Inserted', headers: STREAM })).status).toBe(403);
    const res = await service.handle({ method: 'GET', uri: '/Secret.Inserted', headers: STREAM }, { context: { admin: true } });
    expect(res.status).toBe(200);
    await (res.body as AsyncIterableIterator<string>).return!();
  });

  /** Notes with owners; each user reads only their own rows, admin reads all; toOutput hides Secret. */
  function notes(rule: 'conditions' | 'predicate'): Service {
    const service = createService({
      // The app's authenticate with the adapter's context: a cookie session works with a browser's EventSource.
      authenticate: (_request, context: { session?: string } | undefined) => {
        if (context?.session === undefined) throw new Error('no session');
        return { user: context.session };
      },
    });
    services.push(service);
    service.addResource<{ Id: number; Owner: string; Text: string; Secret?: string }, { Id: number; Owner: string; Text: string }>({
      name: 'Note',
      key: 'Id',
      toOutput: ({ Secret: _hidden, ...visible }) => visible,
      rules: {
        rows: (caller) => {
          const user = (caller.principal as { user: string }).user;
          if (user === 'admin') return null;
          return rule === 'conditions' ? `Owner=${user}` : (note) => note.Owner === user;
        },
      },
    });
    return service;
  }

  test.each(['conditions', 'predicate'] as const)(
    'row rules (%s) filter each message: a subscriber never receives a row it could not GET',
    async (rule) => {
      const service = notes(rule);
      const as = (session: string) => ({ context: { session } });
      const ann = await service.handle({ method: 'GET', uri: '/Note.Inserted', headers: STREAM }, as('ann'));
      const reader = new SseReader(ann.body as AsyncIterable<string>);
      const post = (body: unknown) =>
        service.handle(
          { method: 'POST', uri: '/Note', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
          as('admin'),
        );
      // Only bob's rows first: nothing for ann; then a mixed payload: ann gets hers alone.
      await post([{ Id: 1, Owner: 'bob', Text: 'b1', Secret: 's' }]);
      await post([
        { Id: 2, Owner: 'bob', Text: 'b2', Secret: 's' },
        { Id: 3, Owner: 'ann', Text: 'a3', Secret: 's' },
        { Id: 4, Owner: 'ann', Text: 'a4', Secret: 's' },
      ]);
      const received = (await reader.nextJson()).data;
      expect(received).toEqual([
        { Id: 3, Owner: 'ann', Text: 'a3' },
        { Id: 4, Owner: 'ann', Text: 'a4' },
      ]);
      // Exactly what ann's own GET of those keys answers.
      for (const id of [1, 2, 3, 4]) {
        const one = await service.handle({ method: 'GET', uri: `/Note/Id=${id}`, headers: RAW }, as('ann'));
        const visible = one.status === 200;
        expect(received.some((n: { Id: number }) => n.Id === id)).toBe(visible);
      }
      await reader.close();
    },
  );

  test('an unauthenticated subscriber (no session) is 401', async () => {
    const service = notes('conditions');
    expect((await service.handle({ method: 'GET', uri: '/Note.Inserted', headers: STREAM })).status).toBe(401);
  });
});

describe('resume and bounds', () => {
  const raise = (service: Service, n: number) => call(service, 'POST', '/Person', { body: { Id: n, Name: `p${n}` } });

  test('Last-Event-ID resumes after that event: the ones missed come first, then live ones, none twice', async () => {
    const service = people();
    const first = await subscribe(service, '/Person.Inserted');
    await raise(service, 1);
    const { id } = await first.nextJson();
    await first.close();
    await raise(service, 2);
    await raise(service, 3);
    const resumed = await subscribe(service, '/Person.Inserted', { 'last-event-id': id! });
    await raise(service, 4);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await resumed.nextJson()).data[0].Id);
    expect(ids).toEqual([2, 3, 4]);
  });

  test('past the retention (or an id this log never gave) the stream starts with event: reset, carrying the newest id', async () => {
    const service = people({ streams: { retentionEvents: 2 } });
    const first = await subscribe(service, '/Person.Inserted');
    await raise(service, 1);
    const { id } = await first.nextJson();
    for (let n = 2; n <= 4; n++) await raise(service, n);
    let newest: string | undefined;
    for (let n = 2; n <= 4; n++) newest = (await first.nextJson()).id;
    const late = await subscribe(service, '/Person.Inserted', { 'last-event-id': id! });
    const reset = await late.next();
    expect(reset).toMatchObject({ event: 'reset', id: newest });
    await raise(service, 5);
    expect((await late.nextJson()).data).toEqual([{ Id: 5, Name: 'p5' }]);
    // Still within the retention: resumes from there.
    const recent = await subscribe(service, '/Person.Inserted', { 'last-event-id': newest! });
    expect((await recent.nextJson()).data).toEqual([{ Id: 5, Name: 'p5' }]);
    const foreign = await subscribe(service, '/Person.Inserted', { 'last-event-id': 'not-an-id' });
    expect((await foreign.next())?.event).toBe('reset');
  });

  test('a heartbeat comment keeps an idle stream open', async () => {
    const service = people({ streams: { heartbeatMs: 20 } });
    const reader = await subscribe(service, '/Person.Inserted');
    expect(await reader.nextAny()).toEqual({ comment: '' });
  });

  test('streams per principal and per process are bounded: 429 past them, a slot freed when a stream closes', async () => {
    const service = people({
      apiKeys: [{ key: 'key-a-12345' }, { key: 'key-b-12345' }],
      streams: { maxStreamsPerPrincipal: 2, maxStreams: 3 },
    });
    const a = { authorization: 'apikey key-a-12345' };
    const b = { authorization: 'apikey key-b-12345' };
    const one = await subscribe(service, '/Person.Inserted', a);
    await subscribe(service, '/Person.Updated', a);
    const third = await call(service, 'GET', '/Person.Inserted', { headers: { ...STREAM, ...a } });
    expect([third.status, third.json.ErrorCode]).toEqual([429, 'TooManyRequests']);
    await subscribe(service, '/Person.Inserted', b);
    // The process is full (3): b's second is refused although b has one.
    expect((await call(service, 'GET', '/Person.Inserted', { headers: { ...STREAM, ...b } })).status).toBe(429);
    await one.close();
    expect(service.streams.opened()).toBe(2);
    await subscribe(service, '/Person.Inserted', a);
  });

  test('principals from an authenticate count by value: a fresh { user } object per request is the same user', async () => {
    const service = createService({
      authenticate: (request) => ({ user: request.headers['x-user'] }),
      streams: { maxStreamsPerPrincipal: 1 },
    });
    services.push(service);
    service.addResource({ name: 'Person' });
    await subscribe(service, '/Person.Inserted', { 'x-user': 'ann' });
    expect((await call(service, 'GET', '/Person.Inserted', { headers: { ...STREAM, 'x-user': 'ann' } })).status).toBe(429);
    await subscribe(service, '/Person.Inserted', { 'x-user': 'bob' });
  });

  test('a consumer that falls behind past maxBufferBytes gets a final event: closed, and the stream ends', async () => {
    const service = people({ streams: { maxBufferBytes: 300 } });
    const res = await open(service, '/Person.Inserted');
    const reader = new SseReader(res.body as AsyncIterable<string>);
    // Nothing is read while ten events come: the buffer fills.
    for (let n = 1; n <= 10; n++) await raise(service, n);
    const messages = await reader.rest();
    const last = messages.at(-1)!;
    expect(last.event).toBe('closed');
    expect(JSON.parse(last.data!)).toMatchObject({ Reason: 'SlowConsumer' });
    const delivered = messages.filter((m) => m.event === 'Person.Inserted');
    expect(delivered.length).toBeGreaterThan(0);
    expect(delivered.length).toBeLessThan(10);
    expect(service.streams.opened()).toBe(0);
    // The client resumes from its last message: nothing is lost within the retention.
    const resumed = await subscribe(service, '/Person.Inserted', { 'last-event-id': delivered.at(-1)!.id! });
    const rest = [];
    for (let n = delivered.length + 1; n <= 10; n++) rest.push((await resumed.nextJson()).data[0].Id);
    expect(rest).toEqual(Array.from({ length: 10 - delivered.length }, (_, i) => delivered.length + 1 + i));
  });

  test('stream options are checked when the service is made', () => {
    expect(() => createService({ streams: { maxStreams: 0 } })).toThrow('streams.maxStreams');
    expect(() => createService({ streams: { heartbeatMs: Number.NaN } })).toThrow('streams.heartbeatMs');
  });
});
