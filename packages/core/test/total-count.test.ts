import { createService, MemoryStorage, type Entity, type Service } from '@resourcery/core';
import type { SelectQuery } from '@resourcery/core/storage';
import { call, RAW } from './handle-support';

/** count=true: TotalCount in the envelope, X-Total-Count as a header (docs/uri.md#count). */

const POSTS: Entity[] = Array.from({ length: 12 }, (_, i) => ({
  Id: i + 1,
  Author: ['ann', 'bo', 'cy'][i % 3],
  Views: (i * 7) % 10,
  Title: `post ${i + 1}`,
}));

/** MemoryStorage that records what the service asks of it. */
class Recording extends MemoryStorage {
  counts = 0;
  selects: SelectQuery[] = [];
  select(query: SelectQuery) {
    this.selects.push(query);
    return super.select(query);
  }
  count(query: Pick<SelectQuery, 'predicate'>) {
    this.counts++;
    return super.count(query);
  }
}

function service(storage = new Recording(structuredClone(POSTS))): { s: Service; storage: Recording } {
  const s = createService();
  s.addResource({ name: 'Post', storage, key: 'Id' });
  return { s, storage };
}

describe('count=true', () => {
  test('TotalCount comes after DataCount: the entities selected before offset and limit', async () => {
    const { s } = service();
    const r = await call(s, 'GET', '/Post/Author=ann|bo/order_desc=Views&offset=2&limit=3&count=true');
    expect(r.status).toBe(200);
    expect(r.json.DataCount).toBe(3);
    expect(r.json.TotalCount).toBe(8);
    expect(r.text).toMatch(/"DataCount":3,"TotalCount":8,"TimeElapsedMs":/);
    expect(r.headers['x-total-count']).toBe('8');
  });

  test('with raw=true the total is the header X-Total-Count and the body stays the bare array', async () => {
    const { s } = service();
    const r = await call(s, 'GET', '/Post/_/limit=5&count=true', { headers: RAW });
    expect(r.headers['x-total-count']).toBe('12');
    expect(r.json).toHaveLength(5);
    const head = await call(s, 'HEAD', '/Post/_/limit=5&count=true', { headers: RAW });
    expect(head.headers['x-total-count']).toBe('12');
  });

  test('past the last page: 204 as ever, with the total in the header', async () => {
    const { s } = service();
    const r = await call(s, 'GET', '/Post/Author=cy/offset=10&count=true');
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(r.headers['x-total-count']).toBe('4');
  });

  test('without count=true (or with count=false) there is no total', async () => {
    const { s } = service();
    for (const uri of ['/Post/_/limit=2', '/Post/_/limit=2&count=false']) {
      const r = await call(s, 'GET', uri);
      expect(r.json.TotalCount).toBeUndefined();
      expect(r.headers['x-total-count']).toBeUndefined();
    }
    expect((await call(s, 'GET', '/Post/_/count=yes')).json.ErrorCode).toBe('InvalidMetaConditionValueType');
  });

  test('the storage counts (no rows read for the total), and the page is still cut by the storage', async () => {
    const { s, storage } = service();
    const r = await call(s, 'GET', '/Post/Views>3/order_asc=Views&limit=2&count=true');
    expect(r.json.TotalCount).toBe(POSTS.filter((p) => (p.Views as number) > 3).length);
    expect(storage.counts).toBe(1);
    expect(storage.selects).toHaveLength(1);
    expect(storage.selects[0].limit).toBe(2);
  });

  test('search, distinct, view and macro: the total is what the GET would select without offset and limit', async () => {
    const { s, storage } = service();
    const all = async (uri: string) => (await call(s, 'GET', uri, { headers: RAW })).json.length;
    for (const [uri, unpaged] of [
      ['/Post/_/search=post 1&limit=2&count=true', '/Post/_/search=post 1'],
      ['/Post/_/select=Author&distinct=true&limit=1&count=true', '/Post/_/select=Author&distinct=true'],
      ['/Post/Id>3/select=Views&distinct=true&offset=1&count=true', '/Post/Id>3/select=Views&distinct=true'],
    ]) {
      const total = Number((await call(s, 'GET', uri, { headers: RAW })).headers['x-total-count']);
      expect({ uri, total }).toEqual({ uri, total: await all(unpaged) });
    }
    expect(storage.counts).toBe(0);
    const saved = await call(s, 'POST', '/Service.Admin.Macro', { body: { Name: 'busy', Uri: '/Post/Views>=5/limit=1' } });
    expect(saved.status).toBe(201);
    // The macro's limit=1 pages; its conditions and the caller's count.
    const viaMacro = await call(s, 'GET', '/$busy/Author=bo/count=true');
    expect(viaMacro.json.DataCount).toBe(1);
    expect(viaMacro.json.TotalCount).toBe(POSTS.filter((p) => (p.Views as number) >= 5 && p.Author === 'bo').length);
    expect(viaMacro.json.TotalCount).toBe(3);
  });

  test.each(['conditions', 'predicate'] as const)('row rules (%s): the total counts only the rows the caller may read', async (kind) => {
    const s = createService({
      authenticate: (request) => request.headers['x-user'] ?? null,
    });
    s.addResource({
      name: 'Post',
      storage: new MemoryStorage(structuredClone(POSTS)),
      rules: {
        allow: () => true,
        rows: (caller) => (kind === 'conditions' ? `Author=${String(caller.principal)}` : (e: Entity) => e.Author === caller.principal),
      },
    });
    const r = await call(s, 'GET', '/Post/_/limit=1&count=true', { headers: { 'x-user': 'bo' } });
    expect(r.json.TotalCount).toBe(4);
    expect(r.json.Data).toHaveLength(1);
    expect(r.headers['x-total-count']).toBe('4');
    // The header with raw=true, with conditions of the caller's own, and past the last page.
    const raw = await call(s, 'GET', '/Post/Views<3/limit=1&count=true', { headers: { ...RAW, 'x-user': 'ann' } });
    expect(raw.json).toEqual([expect.objectContaining({ Author: 'ann' })]);
    expect(raw.headers['x-total-count']).toBe(String(POSTS.filter((p) => p.Author === 'ann' && (p.Views as number) < 3).length));
    const past = await call(s, 'GET', '/Post/_/offset=50&count=true', { headers: { ...RAW, 'x-user': 'cy' } });
    expect([past.status, past.headers['x-total-count']]).toEqual([204, '4']);
    // Without the rule the same URI counts every row: the total above is the rule's doing.
    const anyone = createService();
    anyone.addResource({ name: 'Post', storage: new MemoryStorage(structuredClone(POSTS)) });
    expect((await call(anyone, 'GET', '/Post/_/offset=50&count=true', { headers: RAW })).headers['x-total-count']).toBe('12');
  });
});
