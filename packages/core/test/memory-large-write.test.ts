import { isUtf8 } from 'node:buffer';
import { MemoryStorage, Service, ServiceError, type Entity } from '@resourcery/core';
import { compileConditions, parseUri, SELECT_ALL, type SelectQuery } from '@resourcery/core/storage';
import { call, RAW, turnsDuring } from './handle-support';

/**
 * A write of many keyed entities checks their keys in slices, other requests getting turns
 * of the event loop between them, and later writes waiting for it; readers see the batch
 * whole or not at all. A large body is joined in slices, and an error record decodes only
 * the part of it it keeps (docs/limits.md#large-work).
 */

const rows = (from: number, n: number): Entity[] => Array.from({ length: n }, (_, i) => ({ Id: from + i, Name: `n${from + i}` }));

function keyed(initial: Entity[] = []): MemoryStorage {
  const storage = new MemoryStorage(initial);
  storage.declareKey(['Id']);
  return storage;
}

const count = (storage: MemoryStorage) => storage.all().length;

function lookupOf(id: number): SelectQuery {
  const conditions = parseUri(`/Person/Id=${id}`).conditions;
  return { conditions, predicate: compileConditions(conditions), order: null, offset: 0, limit: -1 };
}

async function refusal(write: Promise<void>): Promise<string> {
  try {
    await write;
  } catch (e) {
    return ServiceError.is(e) ? `${e.code}: ${e.message}` : String(e);
  }
  return 'written';
}

describe('MemoryStorage: a large keyed write', () => {
  test('50,000 inserts into 20,000 entities give the event loop turns, then are all stored', async () => {
    const storage = keyed(rows(1, 20_000));
    const turns = await turnsDuring(() => storage.write({ insert: rows(20_001, 50_000) }));
    // Up to 4 ms of slices a turn (util/turn.ts): 5-7 turns on a quiet machine, more on a
    // busy one; 2 or more shows the check did not run in one go after a single yield.
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(count(storage)).toBe(70_000);
    expect(storage.all()[69_999]).toEqual({ Id: 70_000, Name: 'n70000' });
  });

  test('a small write is still done in the caller turn', async () => {
    const storage = keyed(rows(1, 20_000));
    await storage.select(lookupOf(7)); // the key index, built
    void storage.write({ insert: rows(20_001, 10) });
    expect(count(storage)).toBe(20_010);
  });

  test('readers see the batch whole or not at all while its keys are checked', async () => {
    const storage = keyed(rows(1, 1_000));
    const write = storage.write({ insert: rows(1_001, 40_000) });
    const seen: number[] = [];
    let done = false;
    void write.then(() => (done = true));
    while (!done) {
      const result = await storage.select(SELECT_ALL);
      seen.push((result.entities as Entity[]).length);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(seen[0]).toBe(1_000);
    expect(seen.length).toBeGreaterThan(2);
    for (const n of seen) expect([1_000, 41_000]).toContain(n);
    expect(count(storage)).toBe(41_000);
  });

  test('a key taken by a stored entity at the end of the batch: Conflict, and nothing of the batch is stored', async () => {
    const storage = keyed(rows(1, 20_000));
    const batch = [...rows(100_001, 30_000), { Id: 17, Name: 'again' }];
    expect(await refusal(storage.write({ insert: batch }))).toBe('Conflict: Another entity already has the key Id=17; nothing was written');
    expect(count(storage)).toBe(20_000);
  });

  test('the same key twice, far apart in one batch: Conflict, nothing stored', async () => {
    const storage = keyed();
    const batch = [...rows(1, 30_000), { Id: 5, Name: 'twice' }];
    expect(await refusal(storage.write({ insert: batch }))).toMatch(/^Conflict: .*Id=5/);
    expect(count(storage)).toBe(0);
  });

  test('writes sent during the check wait for it and are checked against it, in the order sent', async () => {
    const storage = keyed(rows(1, 1_000));
    const large = storage.write({ insert: rows(1_001, 30_000) });
    // Sent while the large one is being checked: the first takes a key the large batch holds.
    const clash = storage.write({ insert: [{ Id: 20_000, Name: 'late' }] });
    const free = storage.write({ insert: [{ Id: 50_000, Name: 'free' }] });
    const update = storage.write({ update: [{ target: { entity: storage.all()[0] }, value: { Id: 1, Name: 'renamed' } }] });
    expect(count(storage)).toBe(1_000);
    await large;
    expect(await refusal(clash)).toMatch(/^Conflict: .*Id=20000/);
    await free;
    await update;
    expect(count(storage)).toBe(31_001);
    expect(storage.all()[0]).toEqual({ Id: 1, Name: 'renamed' });
    expect(storage.all().at(-1)).toEqual({ Id: 50_000, Name: 'free' });
  });

  test('the first keyed write into 50,000 entities builds the key index in slices; a lookup meanwhile gets the right answer', async () => {
    const storage = keyed(rows(1, 50_000));
    const write = storage.write({ insert: [{ Id: 50_001, Name: 'new' }] });
    expect(count(storage)).toBe(50_000);
    // A read by key while the index is half built: it finishes the build and answers.
    const hit = await storage.select({ ...lookupOf(49_999) });
    expect(hit.entities).toEqual([{ Id: 49_999, Name: 'n49999' }]);
    await write;
    expect(count(storage)).toBe(50_001);
    expect(await refusal(storage.write({ insert: [{ Id: 50_000 }] }))).toMatch(/^Conflict: .*Id=50000/);
    expect(await refusal(storage.write({ insert: [{ Id: 50_001 }] }))).toMatch(/^Conflict: .*Id=50001/);
    expect((await storage.select(lookupOf(50_001))).entities).toEqual([{ Id: 50_001, Name: 'new' }]);
  });

  test('the index built in slices gives turns of the event loop', async () => {
    // A turn runs slices for up to 4 ms (util/turn.ts), so how many turns a build takes
    // depends on the machine: 60,000 keys took 2 turns on a quiet one (the test asked for 3
    // and failed there). 200,000 keys are 25 slices, more than one turn anywhere; a build
    // that yields once and then does the rest in one go takes 1.
    const storage = keyed(rows(1, 200_000));
    expect(await turnsDuring(() => storage.write({ insert: [{ Id: 0, Name: 'zero' }] }))).toBeGreaterThanOrEqual(2);
    expect(count(storage)).toBe(200_001);
  });

  test('a write after a refused large one is applied again in its own turn', async () => {
    const storage = keyed(rows(1, 1_000));
    await refusal(storage.write({ insert: [...rows(5_000, 20_000), { Id: 3 }] }));
    // Let the queue settle, then a small write is synchronous again.
    await new Promise((resolve) => setImmediate(resolve));
    void storage.write({ insert: [{ Id: 900_000 }] });
    expect(count(storage)).toBe(1_001);
  });
});

describe('a large request body', () => {
  test('a body of megabytes sent in chunks that cut characters in two arrives whole', async () => {
    const s = new Service({ events: false });
    s.addResource({ name: 'Person', storage: new MemoryStorage() });
    const text = JSON.stringify(rows(1, 60_000).map((e) => ({ ...e, Note: 'é'.repeat(20) })));
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeGreaterThan(3 * 1024 * 1024);
    async function* chunks() {
      for (let at = 0; at < bytes.length; at += 65_536) yield bytes.subarray(at, at + 65_536);
    }
    const answer = await s.handle({ method: 'POST', uri: '/Person', headers: { 'content-type': 'application/json' }, body: chunks() });
    expect(answer.status).toBe(201);
    const stored = await call(s, 'GET', '/Person/Id=60000', { headers: RAW });
    expect(stored.json).toEqual([{ Id: 60_000, Name: 'n60000', Note: 'é'.repeat(20) }]);
  });

  test('the error record of a failed POST of megabytes keeps its first 16 KiB, redacted, and the body size in bytes', async () => {
    const s = new Service({ events: false });
    s.addResource({ name: 'Person', key: 'Id', storage: new MemoryStorage([{ Id: 1 }]) });
    const body = [{ Id: 2, password: 'hunter2', Name: 'ü'.repeat(10) }, ...rows(3, 60_000), { Id: 1 }];
    const text = JSON.stringify(body);
    const size = Buffer.byteLength(text);
    expect(size).toBeGreaterThan(1024 * 1024);
    const r = await call(s, 'POST', '/Person', { body: text });
    expect(r.status).toBe(409);
    const record = await call(s, 'GET', r.headers.errorinfo, { headers: RAW });
    const kept = record.json[0].Body as string;
    expect(kept.startsWith(`[{"Id":2,"password":"*****","Name":"${'ü'.repeat(10)}"},{"Id":3`)).toBe(true);
    expect(kept.endsWith(`... (${size} bytes)`)).toBe(true);
    expect(kept.length).toBe(16_384 + `... (${size} bytes)`.length);
    expect(isUtf8(Buffer.from(kept))).toBe(true);
  });
});
