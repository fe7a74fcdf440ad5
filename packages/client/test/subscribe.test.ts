import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, ResourceryError, type StreamEvent } from '@resourcery/client';
import { createService, type Service } from '@resourcery/core';
import { createServer } from '@resourcery/node';

interface Person {
  Id: number;
  Name: string;
  Age: number;
}

let server: http.Server;
let service: Service;
let baseUrl: string;

async function start(options: Parameters<typeof createService>[0] = {}): Promise<void> {
  service = createService({ apiKeys: [{ key: 'k-1' }, { key: 'orders-only', allow: [{ resources: ['Order'] }] }], ...options });
  service.addResource({ name: 'Person', key: 'Id' });
  server = createServer(service, { basePath: '/api' });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
}

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await service.close();
});

const insert = (...people: Person[]) =>
  service.handle({
    method: 'POST',
    uri: '/Person',
    headers: { 'content-type': 'application/json', authorization: 'apikey k-1' },
    body: JSON.stringify(people),
  });

/** Collects events; `until(n)` resolves once n have come (a guard of 10 s, not a timing). */
function collector<D>() {
  const events: Array<StreamEvent<D>> = [];
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  return {
    events,
    onEvent(event: StreamEvent<D>) {
      events.push(event);
      for (const w of waiting.filter((w) => events.length >= w.n)) w.resolve();
    },
    until(n: number): Promise<void> {
      if (events.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${events.length} events of ${n} within 10 s`)), 10_000);
        waiting.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
  };
}

/** Resolves once the service has that many streams open (a guard of 10 s). */
async function streamsOpen(n: number): Promise<void> {
  for (let i = 0; i < 1000 && service.streams.opened() !== n; i++) await new Promise((r) => setTimeout(r, 10));
  expect(service.streams.opened()).toBe(n);
}

test('subscribe(query) delivers typed events as they are raised, with the API key, until the signal aborts', async () => {
  await start();
  const api = createClient({ baseUrl, apiKey: 'k-1' });
  const got = collector<Person[]>();
  const controller = new AbortController();
  const done = api.subscribe<Person[]>(api.resource('Person.Inserted').where('Age', '>', 30), got.onEvent, { signal: controller.signal });
  await streamsOpen(1);
  await insert({ Id: 1, Name: 'young', Age: 20 }, { Id: 2, Name: 'old', Age: 70 });
  await got.until(1);
  expect(got.events).toEqual([{ id: expect.any(String), event: 'Person.Inserted', data: [{ Id: 2, Name: 'old', Age: 70 }] }]);
  const ages: number[] = got.events[0].data.map((p) => p.Age);
  expect(ages).toEqual([70]);
  controller.abort();
  await done;
  await streamsOpen(0);
});

test('after the connection drops it reconnects with Last-Event-ID: the events raised meanwhile come, none twice', async () => {
  await start();
  const api = createClient({ baseUrl, apiKey: 'k-1' });
  const got = collector<Person[]>();
  const errors: unknown[] = [];
  const controller = new AbortController();
  const done = api.subscribe<Person[]>('/Person.Inserted', got.onEvent, {
    signal: controller.signal,
    retryMs: 50,
    onError: (e) => errors.push(e),
  });
  await streamsOpen(1);
  await insert({ Id: 1, Name: 'a', Age: 1 });
  await got.until(1);
  server.closeAllConnections();
  await streamsOpen(0);
  await insert({ Id: 2, Name: 'b', Age: 2 });
  await insert({ Id: 3, Name: 'c', Age: 3 });
  await got.until(3);
  await insert({ Id: 4, Name: 'd', Age: 4 });
  await got.until(4);
  expect(got.events.map((e) => e.data[0].Id)).toEqual([1, 2, 3, 4]);
  controller.abort();
  await done;
});

test('a Last-Event-ID the service no longer has calls onReset, and events go on', async () => {
  await start();
  const api = createClient({ baseUrl, apiKey: 'k-1' });
  const got = collector<Person[]>();
  let resets = 0;
  const controller = new AbortController();
  const done = api.subscribe<Person[]>('Person.Inserted', got.onEvent, {
    signal: controller.signal,
    lastEventId: 'gone-7',
    onReset: () => resets++,
  });
  await streamsOpen(1);
  await insert({ Id: 1, Name: 'a', Age: 1 });
  await got.until(1);
  expect(resets).toBe(1);
  controller.abort();
  await done;
});

test('a refusal retrying cannot change rejects with the error (403 without GET on the resource, 401 without a key)', async () => {
  await start();
  const denied = createClient({ baseUrl, apiKey: 'orders-only' }).subscribe('/Person.Inserted', () => undefined);
  await expect(denied).rejects.toBeInstanceOf(ResourceryError);
  await expect(denied).rejects.toMatchObject({ status: 403, code: 'Forbidden' });
  await expect(createClient({ baseUrl }).subscribe('/Person.Inserted', () => undefined)).rejects.toMatchObject({ status: 401 });
  await expect(createClient({ baseUrl, apiKey: 'k-1' }).subscribe('/Person.Inserted/_/limit=1', () => undefined)).rejects.toMatchObject({
    status: 400,
    code: 'InvalidEventSelector',
  });
});
