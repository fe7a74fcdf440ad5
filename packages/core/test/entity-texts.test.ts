import { createService, MemoryStorage, type Service, type Storage } from '@resourcery/core';
import { entitiesText, keptTexts, MAX_TEXT_LENGTH, MAX_TEXTS } from '../src/content-types/entity-texts';
import { call, RAW } from './handle-support';

/** The JSON text of an entity answered alone, kept under its stamp while that state lasts (issue 30). */

describe('entitiesText', () => {
  test('without a state it is JSON.stringify, and nothing is kept', () => {
    const before = keptTexts();
    const entities = [{ id: 1, Name: 'Ada' }];
    expect(entitiesText(entities, undefined)).toBe(JSON.stringify(entities));
    expect(entitiesText([{ id: 1 }, { id: 2 }], {})).toBe('[{"id":1},{"id":2}]');
    expect(keptTexts()).toBe(before);
  });

  test('with a state, the text made the first time is answered for that state, not for another', () => {
    const state = {};
    expect(entitiesText([{ id: 1, Name: 'Ada' }], state)).toBe('[{"id":1,"Name":"Ada"}]');
    // The state stands for the entity's content: what is passed later under it is not read again.
    expect(entitiesText([{ id: 1, Name: 'changed in place' }], state)).toBe('[{"id":1,"Name":"Ada"}]');
    expect(entitiesText([{ id: 1, Name: 'Alan' }], {})).toBe('[{"id":1,"Name":"Alan"}]');
  });

  test(`at most ${MAX_TEXTS} texts are kept, the oldest dropped first, and none longer than ${MAX_TEXT_LENGTH} characters`, () => {
    const states = Array.from({ length: MAX_TEXTS + 10 }, () => ({}));
    states.forEach((state, i) => entitiesText([{ i }], state));
    expect(keptTexts()).toBe(MAX_TEXTS);
    // The first states were dropped: their text is made again from what is passed.
    expect(entitiesText([{ i: 'again' }], states[0])).toBe('[{"i":"again"}]');
    expect(entitiesText([{ i: 'again' }], states.at(-1)!)).toBe(`[{"i":${MAX_TEXTS + 9}}]`);
    const long = {};
    const name = 'x'.repeat(MAX_TEXT_LENGTH);
    expect(entitiesText([{ name }], long)).toBe(`[{"name":"${name}"}]`);
    expect(entitiesText([{ name: 'short' }], long)).toBe('[{"name":"short"}]');
  });
});

describe('a GET of one entity', () => {
  const people = () => [
    { id: 1, Name: 'Ada', Age: 36 },
    { id: 2, Name: 'Alan', Age: 41 },
  ];
  const stored = (storage: MemoryStorage) => (storage as unknown as { entities: Array<Record<string, unknown>> }).entities;
  let storage: MemoryStorage;
  let service: Service;
  beforeEach(() => {
    storage = new MemoryStorage(people());
    service = createService();
    service.addResource({ name: 'Person', key: 'id', storage });
  });

  test('answers the text of that state again, in the envelope and raw, and the new state after a write', async () => {
    const first = await call(service, 'GET', '/Person/id=1');
    expect(first.json.Data).toEqual([{ id: 1, Name: 'Ada', Age: 36 }]);
    // Changing a stored entity in place is outside the storage contract: its state's text stays.
    stored(storage)[0].Name = 'in place';
    expect((await call(service, 'GET', '/Person/id=1')).json.Data).toEqual([{ id: 1, Name: 'Ada', Age: 36 }]);
    expect((await call(service, 'GET', '/Person/1', { headers: RAW })).text).toBe('[{"id":1,"Name":"Ada","Age":36}]');
    // A write through the service is a new state, with a new stamp.
    expect((await call(service, 'PATCH', '/Person/1', { body: { Name: 'Ada L.' } })).status).toBe(200);
    const after = await call(service, 'GET', '/Person/id=1');
    expect(after.json.Data).toEqual([{ id: 1, Name: 'Ada L.', Age: 36 }]);
    expect(after.headers.etag).not.toBe(first.headers.etag);
  });

  test('a projection, a count and several entities are made from the entities, not from a kept text', async () => {
    await call(service, 'GET', '/Person/id=1');
    expect((await call(service, 'GET', '/Person/id=1/select=Name')).json.Data).toEqual([{ Name: 'Ada' }]);
    expect((await call(service, 'GET', '/Person/id=1/rename=Name->Who')).json.Data).toEqual([{ id: 1, Who: 'Ada', Age: 36 }]);
    const counted = await call(service, 'GET', '/Person/id=1/count=true');
    expect([counted.headers['x-total-count'], counted.json.Data]).toEqual(['1', [{ id: 1, Name: 'Ada', Age: 36 }]]);
    stored(storage)[1].Name = 'in place';
    expect((await call(service, 'GET', '/Person')).json.Data.map((p: { Name: string }) => p.Name)).toEqual(['Ada', 'in place']);
  });

  test('an afterRead hook and a toOutput hook are run on every GET', async () => {
    let reads = 0;
    service.addResource({
      name: 'Seen',
      key: 'id',
      storage: new MemoryStorage(people()),
      hooks: { afterRead: (entities) => entities.map((e) => ({ ...e, Reads: ++reads })) },
    });
    const hidden = new MemoryStorage(people());
    service.addResource({ name: 'Hidden', key: 'id', storage: hidden, toOutput: ({ Age: _age, ...rest }) => rest });
    for (const n of [1, 2])
      expect((await call(service, 'GET', '/Seen/id=1')).json.Data).toEqual([{ id: 1, Name: 'Ada', Age: 36, Reads: n }]);
    expect((await call(service, 'GET', '/Hidden/id=1')).json.Data).toEqual([{ id: 1, Name: 'Ada' }]);
    stored(hidden)[0].Name = 'in place';
    expect((await call(service, 'GET', '/Hidden/id=1')).json.Data).toEqual([{ id: 1, Name: 'in place' }]);
  });

  test('a storage whose stamps are new objects each time (no text) keeps nothing', async () => {
    const inner = new MemoryStorage(people());
    const fresh: Storage = {
      select: (q) => inner.select(q),
      write: (b) => inner.write(b),
      stamp: (e) => {
        const { row, version } = inner.stamp(e);
        return { row, version };
      },
    };
    service.addResource({ name: 'Fresh', key: 'id', storage: fresh });
    const before = keptTexts();
    const first = await call(service, 'GET', '/Fresh/id=1');
    expect(first.json.Data).toEqual([{ id: 1, Name: 'Ada', Age: 36 }]);
    expect(first.headers.etag).toMatch(/^"\d+\.[\w-]+"$/);
    stored(inner)[0].Name = 'in place';
    expect((await call(service, 'GET', '/Fresh/id=1')).json.Data).toEqual([{ id: 1, Name: 'in place', Age: 36 }]);
    expect(keptTexts()).toBe(before);
  });
});

test('a kept text reaches no caller a direct request would refuse: row rules and rights run before it', async () => {
  const service = createService({ authenticate: (request) => request.headers['x-user'] ?? 'nobody' });
  const storage = new MemoryStorage([
    { id: 1, Owner: 'ann', Secret: 'ann-only' },
    { id: 2, Owner: 'bob', Secret: 'bob-only' },
  ]);
  service.addResource({
    name: 'Note',
    key: 'id',
    storage,
    rules: {
      rows: (caller) => (caller.principal === 'admin' ? undefined : `Owner=${encodeURIComponent(String(caller.principal))}`),
      allow: (caller) => caller.principal !== 'nobody',
    },
  });
  const as = (user: string | undefined, uri: string) => call(service, 'GET', uri, { headers: user ? { 'x-user': user } : {} });
  // ann's GET keeps the text of note 1 (changed in place afterwards, it is still what is answered).
  expect((await as('ann', '/Note/id=1')).json.Data).toEqual([{ id: 1, Owner: 'ann', Secret: 'ann-only' }]);
  (storage as unknown as { entities: Array<Record<string, unknown>> }).entities[0].Secret = 'in place';
  expect((await as('admin', '/Note/id=1')).json.Data).toEqual([{ id: 1, Owner: 'ann', Secret: 'ann-only' }]);
  // bob's row rule leaves note 1 out, and an anonymous caller may not read at all: the same as before it was kept.
  for (const uri of ['/Note/id=1', '/Note/1']) {
    const bob = await as('bob', uri);
    expect([bob.status, bob.text]).toEqual([204, '']);
  }
  expect((await as(undefined, '/Note/id=1')).status).toBe(403);
});
