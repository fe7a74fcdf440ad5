import { createService, MemoryStorage } from '@resourcery/core';
import { call, RAW } from './handle-support';
import { workbookOf } from './content-types-support';

/**
 * A request's size is the caller's choice: a body of ~130,000 entities overflowed the stack
 * (`push(...inserts)` passes each entity as an argument) and was a 500. Now any size up to
 * `maxEntities` (default 100,000) is written, and more is 413 with nothing written (docs/limits.md).
 */

const many = (n: number, from = 1) => Array.from({ length: n }, (_, i) => ({ Id: from + i, Name: `n${from + i}` }));

test('130,000 entities in one POST (limit raised) are written, with a key and without', async () => {
  const service = createService({ maxEntities: 200_000 });
  service.addResource({ name: 'Plain', storage: new MemoryStorage() });
  service.addResource({ name: 'Keyed', key: 'Id', storage: new MemoryStorage([{ Id: 0, Name: 'zero' }]) });
  expect((await call(service, 'POST', '/Plain', { body: many(130_000), headers: RAW })).status).toBe(201);
  expect((await call(service, 'REPORT', '/Plain', { headers: RAW })).json).toBe(130_000);
  expect((await call(service, 'POST', '/Keyed', { body: many(130_000), headers: RAW })).status).toBe(201);
  expect((await call(service, 'REPORT', '/Keyed', { headers: RAW })).json).toBe(130_001);
});

test("the memory storage's copying path (a removal and 130,000 inserts in one batch) writes them", async () => {
  const zero = { Id: 0 };
  const storage = new MemoryStorage([zero]);
  await storage.write({ delete: [{ entity: zero }], insert: many(130_000) });
  expect(storage.all()).toHaveLength(130_000);
});

test('more than maxEntities (default 100,000) is 413 naming the limit; nothing is written', async () => {
  const service = createService();
  service.addResource({ name: 'Plain', storage: new MemoryStorage() });
  const r = await call(service, 'POST', '/Plain', { body: many(100_001) });
  expect(r.status).toBe(413);
  expect(r.json.ErrorCode).toBe('PayloadTooLarge');
  expect(r.json.Message).toMatch(/100001 entities in one request, more than the limit of 100000 \(service option maxEntities/);
  const strict = createService({ maxEntities: 10 });
  strict.addResource({ name: 'Plain', storage: new MemoryStorage() });
  expect((await call(strict, 'POST', '/Plain', { body: many(10) })).status).toBe(201);
  expect((await call(strict, 'PUT', '/Plain', { body: many(11) })).status).toBe(413);
  expect((await call(strict, 'POST', '/Plain', { body: many(11, 11) })).status).toBe(413);
  expect((await call(strict, 'REPORT', '/Plain', { headers: RAW })).json).toBe(10);
});

test('an Excel import counts its rows against the same limit', async () => {
  const service = createService({ maxEntities: 10 });
  service.addResource({ name: 'Plain', storage: new MemoryStorage() });
  const body = await workbookOf({ Plain: [['Id', 'Name'], ...many(11).map((e) => [e.Id, e.Name])] });
  const excel = { 'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' };
  expect((await service.handle({ method: 'POST', uri: '/Plain', headers: excel, body })).status).toBe(413);
  expect((await call(service, 'GET', '/Plain', { headers: RAW })).status).toBe(204);
});

test.each([0, -1, 1.5])('maxEntities %p is refused when the service is made', (most) => {
  expect(() => createService({ maxEntities: most })).toThrow(/maxEntities must be a whole number of at least 1/);
});
