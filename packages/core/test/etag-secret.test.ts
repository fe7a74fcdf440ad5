import { createHash } from 'node:crypto';
import { createService, MemoryStorage, type Entity, type Storage } from '@resourcery/core';
import { entityVersion } from '@resourcery/core/storage';
import { call, RAW } from './handle-support';

/**
 * The ETag of a storage without stamps: an HMAC of the stored entity, keyed per process or
 * by the service option `etagSecret`, so it changes with every stored property (hidden ones
 * too) yet tells a client nothing it could check guesses of a hidden value against.
 */

const ADA = { Id: 1, Name: 'Ada', Age: 36, Pin: '4821' };

/** A third-party storage without stamps over shared entities (one database, several instances). */
function plainStorage(inner: MemoryStorage): Storage {
  return { select: (q) => inner.select(q), write: (b) => inner.write(b) };
}

/** A service whose clients never see `Pin` (a toOutput hook hides it). */
function serviceOver(storage: Storage, etagSecret?: string) {
  const service = createService({ etagSecret });
  service.addResource<Entity>({
    name: 'Person',
    key: 'Id',
    storage,
    toOutput: ({ Pin: _pin, ...visible }) => visible,
  });
  return service;
}

const SECRET = 'a shared secret of the instances';

test('the ETag is no plain digest of the stored entity: a hidden PIN cannot be found by hashing guesses', async () => {
  const service = serviceOver(plainStorage(new MemoryStorage([{ ...ADA }])));
  const patched = await call(service, 'PATCH', '/Person/1', { body: { Age: 37 }, headers: RAW });
  expect(patched.status).toBe(200);
  expect(patched.json).toEqual([{ Id: 1, Name: 'Ada', Age: 37 }]);
  const etag = patched.headers.etag;
  expect(etag).toMatch(/^"~[\w-]{22}"$/);
  // What a client can compute from the visible entity and each of the 10,000 PINs: never the tag.
  const guesses = [];
  for (let pin = 0; pin < 10_000; pin++) {
    const guess = JSON.stringify({ ...patched.json[0], Pin: String(pin).padStart(4, '0') });
    guesses.push(`"~${createHash('sha256').update(guess).digest('base64url').slice(0, 22)}"`);
  }
  expect(guesses).not.toContain(etag);
});

test('a change of a hidden property changes the ETag, so If-Match still refuses a write over it', async () => {
  const service = serviceOver(plainStorage(new MemoryStorage([{ ...ADA }])));
  const first = (await call(service, 'PATCH', '/Person/1', { body: { Age: 37 } })).headers.etag;
  const second = await call(service, 'PATCH', '/Person/1', { body: { Pin: '0000' } });
  expect(second.status).toBe(200);
  expect(second.headers.etag).not.toBe(first);
  const stale = await call(service, 'PATCH', '/Person/1', { body: { Age: 40 }, headers: { 'if-match': first } });
  expect(stale.status).toBe(412);
  const current = await call(service, 'PATCH', '/Person/1', { body: { Age: 40 }, headers: { 'if-match': second.headers.etag } });
  expect(current.status).toBe(200);
});

test("instances given the same etagSecret answer the same ETag and honour each other's If-Match; other secrets differ", async () => {
  const shared = new MemoryStorage([{ ...ADA }]);
  const [a, b] = [serviceOver(plainStorage(shared), SECRET), serviceOver(plainStorage(shared), SECRET)];
  const onA = (await call(a, 'PATCH', '/Person/1', { body: { Age: 37 } })).headers.etag;
  const onB = (await call(b, 'PATCH', '/Person/1', { body: { Age: 37 } })).headers.etag;
  expect(onB).toBe(onA);
  expect((await call(b, 'PATCH', '/Person/1', { body: { Age: 38 }, headers: { 'if-match': onA } })).status).toBe(200);
  expect((await call(a, 'PATCH', '/Person/1', { body: { Age: 39 }, headers: { 'if-match': onA } })).status).toBe(412);
  const other = serviceOver(plainStorage(shared), 'another secret of sixteen+ characters');
  const now = (await call(a, 'PATCH', '/Person/1', { body: { Age: 40 } })).headers.etag;
  expect((await call(other, 'PATCH', '/Person/1', { body: { Age: 40 } })).headers.etag).not.toBe(now);
  // Without a secret: keyed per process, so stable here and different in another process.
  const unkeyed = plainStorage(shared);
  const entity = { ...ADA };
  expect(entityVersion(unkeyed, entity)).toBe(entityVersion(unkeyed, { ...entity }));
  expect(entityVersion(unkeyed, entity)).not.toBe(now);
  let fresh: typeof entityVersion | undefined;
  jest.isolateModules(() => {
    // A fresh copy of the module, as another process loads it (isolateModules loads synchronously).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    fresh = require('../src/storage/version').entityVersion;
  });
  expect(fresh!(unkeyed, entity)).toMatch(/^~/);
  expect(fresh!(unkeyed, entity)).not.toBe(entityVersion(unkeyed, entity));
});

test('etagSecret: too short is refused at start; one storage cannot serve two secrets', () => {
  expect(() => createService({ etagSecret: 'short' })).toThrow(/at least 16 characters/);
  const storage = plainStorage(new MemoryStorage());
  serviceOver(storage, SECRET);
  serviceOver(storage, SECRET);
  expect(() => serviceOver(storage, 'a different secret, also long')).toThrow(/another etagSecret/);
});
