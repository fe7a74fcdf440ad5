import { createService } from '@resourcery/core';
import { targetOf, type Entity } from '@resourcery/core/storage';
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
