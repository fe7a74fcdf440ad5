import { createService, MemoryStorage, type ResponseInfo, type Storage } from '@resourcery/core';
import type { SelectQuery, WriteBatch } from '@resourcery/core/storage';
import { call, RAW } from './handle-support';

/** ResponseInfo.storageMs: the time a request waited for its storages, apart from the rest of its operation (docs/operations.md). */

const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A memory storage whose every call takes at least `ms`; `fail` makes select throw. */
class SlowStorage implements Storage {
  private readonly inner = new MemoryStorage();
  fail = false;
  constructor(private readonly ms: number) {}
  async select(query: SelectQuery) {
    await wait(this.ms);
    if (this.fail) throw new Error('disk on fire');
    return this.inner.select(query);
  }
  async count(query: Pick<SelectQuery, 'conditions' | 'predicate'>) {
    await wait(this.ms);
    return this.inner.count(query);
  }
  async write(batch: WriteBatch) {
    await wait(this.ms);
    return this.inner.write(batch);
  }
}

function setup(storageTime: boolean | undefined, hookMs = 0) {
  const seen: ResponseInfo[] = [];
  const storage = new SlowStorage(20);
  const s = createService();
  s.addResource({
    name: 'Person',
    key: 'Id',
    storage,
    hooks: hookMs > 0 ? { beforeRead: () => wait(hookMs) } : undefined,
  });
  s.observe({ storageTime, onResponse: (r) => seen.push(r) });
  return { s, seen, storage };
}

describe('storage time', () => {
  test('a GET and a POST report the time their storage calls took, within the operation and the request', async () => {
    const { s, seen } = setup(true);
    await call(s, 'POST', '/Person', { body: [{ Id: 1 }] });
    await call(s, 'GET', '/Person/Id=1', { headers: RAW });
    expect(seen.map((r) => [r.method, r.status])).toEqual([
      ['POST', 201],
      ['GET', 200],
    ]);
    for (const r of seen) {
      // Each call waits at least 20 ms (timers may fire a millisecond early).
      expect(r.storageMs).toBeGreaterThanOrEqual(19);
      expect(r.storageMs).toBeLessThanOrEqual(r.operationMs!);
      expect(r.operationMs).toBeLessThanOrEqual(r.durationMs);
    }
  });

  test("a hook's time is the operation's, not the storage's", async () => {
    const { s, seen } = setup(true, 60);
    await call(s, 'GET', '/Person', { headers: RAW });
    const [r] = seen;
    expect(r.storageMs).toBeGreaterThanOrEqual(19);
    expect(r.operationMs! - r.storageMs!).toBeGreaterThanOrEqual(59);
  });

  test('a storage that fails: its time is counted, the answer is the 500', async () => {
    const { s, seen, storage } = setup(true);
    storage.fail = true;
    expect((await call(s, 'GET', '/Person', { headers: RAW })).status).toBe(500);
    expect(seen[0].status).toBe(500);
    expect(seen[0].storageMs).toBeGreaterThanOrEqual(19);
    expect(seen[0].storageMs).toBeLessThanOrEqual(seen[0].durationMs);
  });

  test('count=true and REPORT time the count; a 404 before any storage call times nothing', async () => {
    const { s, seen } = setup(true);
    await call(s, 'REPORT', '/Person');
    await call(s, 'GET', '/Nobody');
    expect(seen[0].storageMs).toBeGreaterThanOrEqual(19);
    expect(seen[1].storageMs).toBe(0);
  });

  test('off unless an observer asks: storageMs is undefined', async () => {
    const { s, seen } = setup(undefined);
    await call(s, 'GET', '/Person', { headers: RAW });
    expect(seen[0].status).toBe(204);
    expect(seen[0].storageMs).toBeUndefined();
  });

  test('concurrent requests each get their own storage time', async () => {
    const { s, seen } = setup(true);
    await Promise.all([call(s, 'GET', '/Person', { headers: RAW }), call(s, 'GET', '/Nobody')]);
    const byUri = new Map(seen.map((r) => [r.uri, r.storageMs]));
    expect(byUri.get('/Person')).toBeGreaterThanOrEqual(19);
    expect(byUri.get('/Nobody')).toBe(0);
  });
});
