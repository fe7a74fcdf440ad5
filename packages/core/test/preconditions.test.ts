import { createService, MemoryStorage, type Service, type Storage } from '@resourcery/core';
import { entityTag, parseEntityTags } from '../src/request/preconditions';
import { entityVersion } from '../src/storage/version';
import { call, RAW } from './handle-support';

/** DESIGN 13: ETag on one-entity answers, If-Match on writes (412), If-None-Match on reads (304). */

const PEOPLE = [
  { Id: 1, Name: 'Ada', Age: 36 },
  { Id: 2, Name: 'Alan', Age: 41 },
];

/** A third-party storage that issues no stamps: the service derives versions from content. */
function plainStorage(initial: object[]): Storage {
  const inner = new MemoryStorage(initial as never);
  return { select: (q) => inner.select(q), write: (b) => inner.write(b) };
}

describe.each([
  ['a storage with stamps (memory)', (data: object[]) => new MemoryStorage(data as never)],
  ['a storage without stamps', plainStorage],
])('on %s', (_name, storageOf) => {
  let service: Service;
  beforeEach(() => {
    service = createService();
    service.addResource({ name: 'Person', key: 'Id', storage: storageOf(PEOPLE) });
  });
  const etagOf = async (uri: string) => (await call(service, 'GET', uri, { headers: RAW })).headers.etag;

  test('an answer with one entity carries a strong ETag; several or none carry none', async () => {
    const one = await call(service, 'GET', '/Person/1', { headers: RAW });
    expect(one.headers.etag).toMatch(/^"[^"\s]+"$/);
    expect(await etagOf("/Person/Name='Ada'")).toBe(one.headers.etag);
    expect(await etagOf('/Person/1/select=Name')).toBe(one.headers.etag);
    expect(await etagOf('/Person/2')).not.toBe(one.headers.etag);
    expect((await call(service, 'GET', '/Person')).headers.etag).toBeUndefined();
    const none = await call(service, 'GET', '/Person/9');
    expect(none.status).toBe(204);
    expect(none.headers.etag).toBeUndefined();
    expect((await call(service, 'HEAD', '/Person/1')).headers.etag).toBe(one.headers.etag);
  });

  test('the ETag changes with the entity, and a write of one entity answers the new one', async () => {
    const before = await etagOf('/Person/1');
    const patched = await call(service, 'PATCH', '/Person/1', { body: { Age: 37 } });
    expect(patched.status).toBe(200);
    expect(patched.headers.etag).toBeDefined();
    expect(patched.headers.etag).not.toBe(before);
    expect(await etagOf('/Person/1')).toBe(patched.headers.etag);
    const put = await call(service, 'PUT', '/Person/1', { body: { Id: 1, Name: 'Ada L.', Age: 37 } });
    expect(put.headers.etag).not.toBe(patched.headers.etag);
    expect(await etagOf('/Person/1')).toBe(put.headers.etag);
    const inserted = await call(service, 'POST', '/Person', { body: { Id: 3, Name: 'Grace', Age: 45 } });
    expect(inserted.status).toBe(201);
    expect(await etagOf('/Person/3')).toBe(inserted.headers.etag);
    expect((await call(service, 'PATCH', '/Person/_/unsafe=true', { body: { Age: 1 } })).headers.etag).toBeUndefined();
  });

  test('If-None-Match on GET and HEAD: 304 with the ETag and no body while current, 200 once changed', async () => {
    const etag = await etagOf('/Person/1');
    for (const method of ['GET', 'HEAD']) {
      for (const header of [etag!, `"other", ${etag}`, `W/${etag}`, '*']) {
        const res = await call(service, method, '/Person/1', { headers: { ...RAW, 'if-none-match': header } });
        expect([method, header, res.status, res.headers.etag, res.text]).toEqual([method, header, 304, etag, '']);
      }
    }
    expect((await call(service, 'GET', '/Person/1', { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    expect((await call(service, 'GET', '/Person/9', { headers: { 'if-none-match': '*' } })).status).toBe(204);
    // Several entities have no ETag: never 304.
    expect((await call(service, 'GET', '/Person', { headers: { 'if-none-match': etag! } })).status).toBe(200);
    await call(service, 'PATCH', '/Person/1', { body: { Age: 37 } });
    const changed = await call(service, 'GET', '/Person/1', { headers: { ...RAW, 'if-none-match': etag! } });
    expect(changed.status).toBe(200);
    expect(changed.json).toEqual([{ Id: 1, Name: 'Ada', Age: 37 }]);
    expect(changed.headers.etag).not.toBe(etag);
  });

  test('If-Match on PATCH, PUT and DELETE: written while current; 412 PreconditionFailed, nothing written, once changed', async () => {
    const etag = (await etagOf('/Person/1'))!;
    const ok = await call(service, 'PATCH', '/Person/1', { body: { Age: 37 }, headers: { 'if-match': etag } });
    expect(ok.status).toBe(200);
    for (const [method, body] of [
      ['PATCH', { Age: 99 }],
      ['PUT', { Id: 1, Name: 'X', Age: 99 }],
      ['DELETE', undefined],
    ] as const) {
      const stale = await call(service, method, '/Person/1', { body, headers: { 'if-match': etag } });
      expect([method, stale.status, stale.json.ErrorCode]).toEqual([method, 412, 'PreconditionFailed']);
      expect(stale.json).toMatchObject({ Status: 'fail', ErrorType: 'Service.Results.PreconditionFailed' });
      expect(stale.headers.errorinfo).toMatch(/^\/Service\.Admin\.Error\/id=/);
    }
    expect((await call(service, 'GET', '/Person/1', { headers: RAW })).json).toEqual([{ Id: 1, Name: 'Ada', Age: 37 }]);
    // One of a list is enough; weak tags never match a write; a malformed list matches nothing.
    const current = ok.headers.etag;
    for (const header of [`W/${current}`, `"${current}`, '"nope"'])
      expect((await call(service, 'DELETE', '/Person/1', { headers: { 'if-match': header } })).status).toBe(412);
    expect((await call(service, 'DELETE', '/Person/1', { headers: { 'if-match': `"nope", ${current}` } })).json).toMatchObject({
      DeletedCount: 1,
    });
  });

  test('If-Match: * writes only an entity that exists (PUT never inserts with it)', async () => {
    expect((await call(service, 'PATCH', '/Person/2', { body: { Age: 42 }, headers: { 'if-match': '*' } })).status).toBe(200);
    const put = await call(service, 'PUT', '/Person/5', { body: { Name: 'Nobody', Age: 1 }, headers: { 'if-match': '*' } });
    expect(put.status).toBe(412);
    expect((await call(service, 'GET', '/Person/5')).status).toBe(204);
    expect((await call(service, 'DELETE', '/Person/5', { headers: { 'if-match': '*' } })).status).toBe(412);
  });

  test('If-None-Match on writes: * inserts only (PUT), a named current version refuses the write with 412', async () => {
    const taken = await call(service, 'PUT', '/Person/1', { body: { Name: 'Twice', Age: 1 }, headers: { 'if-none-match': '*' } });
    expect([taken.status, taken.json.ErrorCode]).toEqual([412, 'PreconditionFailed']);
    expect((await call(service, 'GET', '/Person/1', { headers: RAW })).json).toEqual([PEOPLE[0]]);
    const created = await call(service, 'PUT', '/Person/5', { body: { Name: 'New', Age: 1 }, headers: { 'if-none-match': '*' } });
    expect(created.status).toBe(201);
    // Two create-only PUTs of one new key: one inserts, the other finds it and is refused.
    const both = await Promise.all(
      ['A', 'B'].map((Name) => call(service, 'PUT', '/Person/6', { body: { Name, Age: 2 }, headers: { 'if-none-match': '*' } })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([201, 412]);
    const etag = (await etagOf('/Person/2'))!;
    for (const [method, body] of [
      ['PATCH', { Age: 1 }],
      ['PUT', { Id: 2, Name: 'Alan', Age: 1 }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await call(service, method, '/Person/2', { body, headers: { 'if-none-match': `"other", ${etag}` } });
      expect([method, refused.status]).toEqual([method, 412]);
    }
    expect((await call(service, 'GET', '/Person/2', { headers: RAW })).json).toEqual([PEOPLE[1]]);
    expect((await call(service, 'PATCH', '/Person/2', { body: { Age: 42 }, headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  });

  test('If-Match on GET: 412 once the entity changed', async () => {
    const etag = (await etagOf('/Person/1'))!;
    expect((await call(service, 'GET', '/Person/1', { headers: { 'if-match': etag } })).status).toBe(200);
    await call(service, 'PATCH', '/Person/1', { body: { Age: 37 } });
    const res = await call(service, 'GET', '/Person/1', { headers: { 'if-match': etag } });
    expect([res.status, res.json.ErrorCode]).toEqual([412, 'PreconditionFailed']);
  });

  test('lost update: two read-modify-write clients with the same ETag, one wins and the other gets 412', async () => {
    const read = await call(service, 'GET', '/Person/1', { headers: RAW });
    const [a, b] = await Promise.all([
      call(service, 'PATCH', '/Person/1', { body: { Age: read.json[0].Age + 1 }, headers: { 'if-match': read.headers.etag } }),
      call(service, 'PATCH', '/Person/1', { body: { Name: `${read.json[0].Name}!` }, headers: { 'if-match': read.headers.etag } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 412]);
    const winner = a.status === 200 ? a : b;
    const now = await call(service, 'GET', '/Person/1', { headers: RAW });
    expect(now.json).toEqual(winner.json.Data);
    expect(now.headers.etag).toBe(winner.headers.etag);
  });
});

test('a restarted process (the CLI on its file) never answers an ETag it answered before the restart', () => {
  /** A fresh copy of the memory storage module, as a new process loads it. */
  const restarted = (): typeof MemoryStorage => {
    let fresh: typeof MemoryStorage | undefined;
    jest.isolateModules(() => {
      // isolateModules loads synchronously: require is the only way to get a fresh copy here.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      fresh = require('../src/storage/memory').MemoryStorage;
    });
    return fresh!;
  };
  const stampOf = (Storage: typeof MemoryStorage) => {
    const storage = new Storage([{ Id: 1, Name: 'Ada' }]);
    return storage.stamp((storage as unknown as { entities: object[] }).entities[0] as never);
  };
  const [before, after] = [stampOf(restarted()), stampOf(restarted())];
  expect(after.row).toBe(before.row);
  expect(after.version).not.toBe(before.version);
});

test("a memory stamp's text is its row and version, kept: the ETag is one string a state, a new one after a write", async () => {
  const storage = new MemoryStorage([{ Id: 1, Name: 'Ada' }] as never);
  const [ada] = (storage as unknown as { entities: object[] }).entities as never[];
  const stamp = storage.stamp(ada);
  expect(stamp.text).toBe(`${stamp.row}.${stamp.version}`);
  expect(entityVersion(storage, ada)).toBe(stamp.text);
  expect(storage.stamp(ada)).toBe(stamp);
  const service = createService();
  service.addResource({ name: 'Person', key: 'Id', storage });
  const first = await call(service, 'GET', '/Person/1', { headers: RAW });
  expect(first.headers.etag).toBe(`"${stamp.text}"`);
  await call(service, 'PATCH', '/Person/1', { body: { Name: 'Ada L.' } });
  const second = await call(service, 'GET', '/Person/1', { headers: RAW });
  expect(second.headers.etag).not.toBe(first.headers.etag);
  const [updated] = (storage as unknown as { entities: object[] }).entities as never[];
  expect(storage.stamp(updated).row).toBe(stamp.row);
  expect(second.headers.etag).toBe(`"${storage.stamp(updated).text}"`);
});

test('entityTag answers the tag of the version asked, whichever came before it', () => {
  expect(entityTag('1.a')).toBe('"1.a"');
  expect(entityTag('1.a')).toBe('"1.a"');
  expect(entityTag('2.b')).toBe('"2.b"');
  expect(entityTag(['1', 'a'].join('.'))).toBe('"1.a"');
  expect(entityTag('')).toBe('""');
  expect(entityTag('2.b')).toBe('"2.b"');
});

describe('entity tag lists', () => {
  test.each([
    ['"1.2"', false, ['1.2']],
    [' "1.2" , W/"3.4", "x" ', false, ['1.2', 'x']],
    [' "1.2" , W/"3.4", "x" ', true, ['1.2', '3.4', 'x']],
    ['*', false, ['*']],
    ['abc', false, ['abc']],
    ['W/"x"', false, []],
    ['"unterminated', true, []],
    ['"a" "b"', true, []],
  ] as const)('%j (weak: %s) names %j', (header, weak, tags) => {
    expect(parseEntityTags(header, weak)).toEqual(tags);
  });
});
