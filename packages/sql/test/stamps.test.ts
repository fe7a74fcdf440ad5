import { createService } from '@resourcery/core';
import { Locator, targetOf, type Entity, type SelectQuery } from '@resourcery/core/storage';
import { createSqlStorage, openPglite, type SqlClient } from '@resourcery/sql';
import { call, RAW } from './support';

/**
 * The row and version of each entity a SQL storage hands out (stamps, docs/storage.md) are
 * held by the entity in a private field (packages/sql/src/stamps.ts), not in a WeakMap:
 * the same stamps as before, for entities read one at a time, in a page of many, cut by
 * `select`, inserted or updated; invisible to the entity's readers; and never taken by
 * another storage, nor by a copy of the entity.
 */

let db: SqlClient & { close(): Promise<void> };
let tables = 0;
beforeAll(async () => {
  db = await openPglite();
}, 120000);
afterAll(() => db.close());

const table = () => `stamped_${++tables}`;

test('stamps of entities read in a page of many, cut by select, inserted and updated are their rows and versions', async () => {
  const name = table();
  const storage = createSqlStorage({ client: db, table: name });
  const inserted: Entity[] = Array.from({ length: 300 }, (_, i) => ({ Id: i + 1, Name: `n${i}`, Age: i % 7 }));
  await storage.write({ insert: inserted });
  const { rows } = (await db.query(`SELECT id::text AS id, version::text AS version, body FROM ${name} ORDER BY id`)) as {
    rows: Array<{ id: string; version: string; body: string }>;
  };
  const stampOf = (e: Entity) => rows.find((r) => (JSON.parse(r.body) as Entity).Id === e.Id);
  for (const e of inserted) expect(storage.stamp(e)).toEqual({ row: stampOf(e)!.id, version: '0' });

  const all = [...((await storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 })).entities as Entity[])];
  expect(all).toHaveLength(300);
  for (const e of all) expect(storage.stamp(e)).toEqual({ row: stampOf(e)!.id, version: '0' });
  // Invisible to readers: no key, no JSON, not copied.
  expect(Reflect.ownKeys(all[0])).toEqual(['Id', 'Name', 'Age']);
  expect(JSON.stringify(all[0])).toBe('{"Id":1,"Name":"n0","Age":0}');
  expect(storage.stamp({ ...all[0] })).toBeUndefined();
  expect(storage.stamp(structuredClone(all[0]))).toBeUndefined();
  // Another storage, even on the same table, does not vouch for this one's entities.
  expect(createSqlStorage({ client: db, table: name }).stamp(all[0])).toBeUndefined();

  // Updated (a frozen value too): the new version; the old entity keeps the old one, which the storage refuses.
  const value = Object.freeze({ ...all[1], Age: 40 });
  await storage.write({ update: [{ target: targetOf(storage, all[1]), value }] });
  expect(storage.stamp(value)).toEqual({ row: stampOf(all[1])!.id, version: '1' });
  expect(storage.stamp(all[1])).toEqual({ row: stampOf(all[1])!.id, version: '0' });
  await expect(storage.write({ update: [{ target: targetOf(storage, all[1]), value: { ...all[1], Age: 41 } }] })).rejects.toMatchObject({
    code: 'Conflict',
  });
  // The same object written again takes its newer stamp.
  await storage.write({ update: [{ target: targetOf(storage, value), value }] });
  expect(storage.stamp(value)).toEqual({ row: stampOf(all[1])!.id, version: '2' });
  // A copy was never handed out: it has no row to change.
  await expect(storage.write({ delete: [{ entity: { ...value } }] })).rejects.toMatchObject({ code: 'Conflict' });
});

test('a GET of many then of one, cut by select or not, gives the ETag a later PATCH with If-Match takes', async () => {
  const service = createService();
  service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: db, table: table() }) });
  const people = Array.from({ length: 500 }, (_, i) => ({ Id: i + 1, Name: `p${i}`, City: i % 2 ? 'Oslo' : 'Rome' }));
  expect((await call(service, 'POST', '/Person', people)).status).toBe(201);

  const many = await call(service, 'GET', '/Person/_/select=Id,Name');
  expect((many.json as Entity[]).length).toBe(500);
  expect(many.headers.etag).toBeUndefined();

  const one = await call(service, 'GET', '/Person/Id=250/select=Id,Name');
  expect(one.json).toEqual([{ Id: 250, Name: 'p249' }]);
  const whole = await call(service, 'GET', '/Person/250');
  expect(one.headers.etag).toMatch(/^"[^"]+"$/);
  expect(whole.headers.etag).toBe(one.headers.etag);

  const patched = await call(service, 'PATCH', '/Person/250', { City: 'Bergen' }, { ...RAW, 'if-match': one.headers.etag });
  expect(patched.status).toBe(200);
  expect(patched.headers.etag).not.toBe(one.headers.etag);
  expect((await call(service, 'GET', '/Person/250')).headers.etag).toBe(patched.headers.etag);
  const stale = await call(service, 'PATCH', '/Person/250', { City: 'Paris' }, { ...RAW, 'if-match': one.headers.etag });
  expect(stale.status).toBe(412);

  // A PATCH of many (each entity a target by its stamp) and DELETE of many.
  expect((await call(service, 'PATCH', "/Person/City='Rome'/unsafe=true", { City: 'Roma' })).status).toBe(200);
  expect(((await call(service, 'GET', "/Person/City='Roma'/select=Id")).json as Entity[]).length).toBe(250);
  expect((await call(service, 'DELETE', "/Person/City='Roma'/unsafe=true")).status).toBeLessThan(300);
  expect(((await call(service, 'GET', '/Person/_/select=Id')).json as Entity[]).length).toBe(250);
});

test('a page of several rows cut by select comes without stamps (the service asks none of them); one cut row, a page the service cuts, and whole rows keep theirs', async () => {
  const name = table();
  const storage = createSqlStorage({ client: db, table: name });
  await storage.write({ insert: Array.from({ length: 30 }, (_, i) => ({ Id: i + 1, Name: `n${i}`, Age: i % 7 })) });
  const select = [new Locator('Id'), new Locator('Name')];
  const query = (q: Partial<SelectQuery>): SelectQuery => ({ conditions: [], predicate: null, order: null, offset: 0, limit: -1, ...q });
  const read = async (q: Partial<SelectQuery>) => [...((await storage.select(query(q))).entities as Entity[])];

  const page = await read({ select, limit: 10 });
  expect(page).toEqual(Array.from({ length: 10 }, (_, i) => ({ Id: i + 1, Name: `n${i}` })));
  for (const e of page) expect(storage.stamp(e)).toBeUndefined();
  // One row: a GET of one answers its version (ETag), so it has its stamp.
  const [one] = await read({ select, limit: 1, offset: 4 });
  expect(storage.stamp(one)).toEqual({ row: expect.stringMatching(/^\d+$/), version: '0' });
  // No page applied here (the service pages, and may keep one of them), or no cut: stamped.
  for (const e of await read({ select })) expect(storage.stamp(e)).toBeDefined();
  for (const e of await read({ limit: 10 })) expect(storage.stamp(e)).toBeDefined();

  // Through the service: a page of one cut row answers the whole entity's ETag, a page of several none.
  const service = createService();
  service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: db, table: name }) });
  const single = await call(service, 'GET', '/Person/_/select=Id,Name&order_asc=Id&offset=3&limit=1');
  expect(single.json).toEqual([{ Id: 4, Name: 'n3' }]);
  expect(single.headers.etag).toMatch(/^"[^"]+"$/);
  expect(single.headers.etag).toBe((await call(service, 'GET', '/Person/4')).headers.etag);
  const several = await call(service, 'GET', '/Person/_/select=Id,Name&order_asc=Id&offset=3&limit=3');
  expect(several.json).toEqual([4, 5, 6].map((Id) => ({ Id, Name: `n${Id - 1}` })));
  expect(several.headers.etag).toBeUndefined();
});
