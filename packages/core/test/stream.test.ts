import { createService, MemoryStorage, ServiceError, type Entity, type Service } from '@resourcery/core';
import type { SelectQuery, SelectResult, Storage } from '@resourcery/core/storage';
import { bodyText, call, RAW } from './handle-support';

/**
 * SelectQuery.stream (docs/storage.md, "Streaming"): where the answer is written one entity
 * at a time, a storage may hand out an AsyncIterable, which the service projects and
 * writes as it is read; everywhere else an AsyncIterable is read whole first, as before.
 */

const PEOPLE: Entity[] = Array.from({ length: 25 }, (_, i) => ({ Id: i + 1, Name: `N${i % 4}` }));

/** Memory storage that returns its answer as an async generator, and records the stream flag and how far it was read. */
class StreamingStorage implements Storage {
  readonly asked: Array<boolean | undefined> = [];
  read = 0;
  private readonly memory: MemoryStorage;

  constructor(
    entities: Entity[],
    private readonly failAt = -1,
    private readonly failure: Error = new ServiceError('Conflict', 'the storage failed'),
  ) {
    this.memory = new MemoryStorage(entities);
  }

  async select(query: SelectQuery): Promise<SelectResult> {
    this.asked.push(query.stream);
    const result = await this.memory.select(query);
    const all = [...(result.entities as Entity[])];
    const generate = async function* (this: StreamingStorage): AsyncGenerator<Entity> {
      for (const [i, e] of all.entries()) {
        if (i === this.failAt) throw this.failure;
        this.read++;
        yield e;
      }
    }.bind(this);
    return { ...result, entities: generate() };
  }

  write(): Promise<void> {
    return Promise.resolve();
  }
}

function serviceOn(storage: Storage, hooks = {}): Service {
  const service = createService();
  service.addResource({ name: 'Person', storage, hooks });
  return service;
}

test('JSON, the envelope and JSON Lines take a stream: same answers as from an array, read while written', async () => {
  const storage = new StreamingStorage(PEOPLE);
  const service = serviceOn(storage);
  const raw = await call(service, 'GET', '/Person/Name=N1/select=Id', { headers: RAW });
  expect(raw.json).toEqual(PEOPLE.filter((p) => p.Name === 'N1').map(({ Id }) => ({ Id })));
  expect(typeof raw.body).not.toBe('string');
  const envelope = await call(service, 'GET', '/Person/_/offset=3&limit=5');
  expect(envelope.json).toMatchObject({ Status: 'success', Data: PEOPLE.slice(3, 8), DataCount: 5 });
  const lines = await call(service, 'GET', '/Person', { headers: { accept: 'application/jsonlines' } });
  expect(lines.text).toBe(PEOPLE.map((p) => `${JSON.stringify(p)}\n`).join(''));
  expect(storage.asked).toEqual([true, true, true]);
});

test('only the first entity is read before the body is, then a chunk at a time; an abandoned body stops the reading', async () => {
  // 10 KB each: a 64 KiB chunk holds 7.
  const storage = new StreamingStorage(PEOPLE.map((p) => ({ ...p, Pad: 'x'.repeat(10_000) })));
  const res = await serviceOn(storage).handle({ method: 'GET', uri: '/Person', headers: { accept: 'application/jsonlines' } });
  expect(res.status).toBe(200);
  expect(storage.read).toBe(1);
  const iterator = (res.body as AsyncIterable<string>)[Symbol.asyncIterator]();
  await iterator.next();
  expect(storage.read).toBe(7);
  await iterator.return?.();
  await iterator.next();
  expect(storage.read).toBe(7);
});

test('where the whole result is needed (Excel, afterRead, order left to the service, REPORT), no stream is asked for and answers stay whole', async () => {
  const storage = new StreamingStorage(PEOPLE);
  const hooked = new StreamingStorage(PEOPLE);
  await call(serviceOn(storage), 'GET', '/Person', {
    headers: { accept: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
  });
  expect((await call(serviceOn(storage), 'GET', '/Person/_/select=Name&distinct=true', { headers: RAW })).json).toHaveLength(4);
  expect((await call(serviceOn(storage), 'REPORT', '/Person', { headers: RAW })).json).toBe(25);
  expect((await call(serviceOn(storage), 'GET', '/Person', { headers: { ...RAW, 'if-none-match': '"x"' } })).json).toHaveLength(25);
  expect(storage.asked.every((s) => s === undefined)).toBe(true);
  const after = await call(serviceOn(hooked, { afterRead: (e: Entity[]) => e.slice(0, 2) }), 'GET', '/Person', { headers: RAW });
  expect(after.json).toEqual(PEOPLE.slice(0, 2));
  expect(hooked.asked).toEqual([undefined]);
});

test('an empty stream is a 204; a failure on the first entity is an error response, a later one cuts the body', async () => {
  expect((await call(serviceOn(new StreamingStorage([])), 'GET', '/Person', { headers: RAW })).status).toBe(204);
  const early = await call(serviceOn(new StreamingStorage(PEOPLE, 0)), 'GET', '/Person', { headers: RAW });
  expect(early.status).toBe(409);
  const res = await serviceOn(new StreamingStorage(PEOPLE, 10)).handle({ method: 'GET', uri: '/Person', headers: RAW });
  expect(res.status).toBe(200);
  const drain = async () => {
    for await (const _ of res.body as AsyncIterable<string>);
  };
  await expect(drain()).rejects.toThrow('the storage failed');
});

test('a failure after the headers is reported as any other: onError for a 5xx, and an Error record', async () => {
  const reported: string[] = [];
  const storage = new StreamingStorage(PEOPLE, 10, new Error('the database went away'));
  const service = createService({ onError: (error) => reported.push(error.message) });
  service.addResource({ name: 'Person', storage });
  const res = await service.handle({ method: 'GET', uri: '/Person', headers: RAW });
  expect(res.status).toBe(200);
  await expect(bodyText(res.body)).rejects.toThrow('the database went away');
  expect(reported).toHaveLength(1);
  const records = await call(service, 'GET', '/Service.Admin.Error', { headers: RAW });
  expect(records.json).toEqual([expect.objectContaining({ ResourceName: 'Person', ErrorCode: 'Unknown', Uri: '/Person' })]);
});
