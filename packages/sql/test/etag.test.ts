import { createService, type Service } from '@resourcery/core';
import { createSqlStorage, openPglite, type SqlClient } from '@resourcery/sql';
import { call, RAW } from './support';

/**
 * DESIGN 13 over several instances: the ETag is the row's version in the database, so
 * every service on one table answers the same ETag for the same stored entity, and a
 * write on any of them makes the others refuse a stale If-Match (412).
 */

let db: SqlClient & { close(): Promise<void> };
let tables = 0;
beforeAll(async () => {
  db = await openPglite();
}, 120000);
afterAll(() => db.close());

/** Two services (instances) over one fresh table, with one stored Person. */
async function instances(): Promise<[Service, Service]> {
  const table = `etag_people_${++tables}`;
  const make = () => {
    const service = createService();
    service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: db, table }) });
    return service;
  };
  const [a, b] = [make(), make()];
  expect((await call(a, 'POST', '/Person', { Id: 1, Name: 'Ann', Age: 30 })).status).toBe(201);
  return [a, b];
}

test('every instance answers the same ETag for the same stored entity, and a write on one changes it for all', async () => {
  const [a, b] = await instances();
  const etag = (await call(a, 'GET', '/Person/1')).headers.etag;
  expect(etag).toMatch(/^"[^"]+"$/);
  expect((await call(b, 'GET', '/Person/1')).headers.etag).toBe(etag);
  expect((await call(b, 'GET', '/Person/1', undefined, { ...RAW, 'if-none-match': etag })).status).toBe(304);

  const written = await call(b, 'PATCH', '/Person/1', { Age: 31 }, { ...RAW, 'if-match': etag });
  expect(written.status).toBe(200);
  expect(written.headers.etag).not.toBe(etag);
  expect((await call(a, 'GET', '/Person/1')).headers.etag).toBe(written.headers.etag);
  expect((await call(a, 'GET', '/Person/1', undefined, { ...RAW, 'if-none-match': etag })).status).toBe(200);
  expect((await call(a, 'GET', '/Person/1', undefined, { ...RAW, 'if-none-match': written.headers.etag })).status).toBe(304);

  const stale = await call(a, 'PATCH', '/Person/1', { Age: 99 }, { ...RAW, 'if-match': etag });
  expect([stale.status, (stale.json as { ErrorCode: string }).ErrorCode]).toEqual([412, 'PreconditionFailed']);
  expect((await call(a, 'DELETE', '/Person/1', undefined, { ...RAW, 'if-match': etag })).status).toBe(412);
  expect((await call(b, 'GET', '/Person/1')).json).toEqual([{ Id: 1, Name: 'Ann', Age: 31 }]);
});

test('lost update across instances: two read-modify-write clients on two instances, one wins and the other gets 412', async () => {
  const [a, b] = await instances();
  const read = await call(a, 'GET', '/Person/1');
  const [onA, onB] = await Promise.all([
    call(a, 'PATCH', '/Person/1', { Age: 31 }, { ...RAW, 'if-match': read.headers.etag }),
    call(b, 'PATCH', '/Person/1', { Name: 'Anne' }, { ...RAW, 'if-match': read.headers.etag }),
  ]);
  expect([onA.status, onB.status].sort()).toEqual([200, 412]);
  const winner = onA.status === 200 ? onA : onB;
  const now = await call(b, 'GET', '/Person/1');
  expect(now.json).toEqual(winner.json);
  expect(now.headers.etag).toBe(winner.headers.etag);
});
