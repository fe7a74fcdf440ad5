import fc from 'fast-check';
import { createService, MemoryStorage, type Entity } from '@resourcery/core';
import { parseUri, SELECT_ALL, compileConditions, type SelectQuery } from '@resourcery/core/storage';

/**
 * MemoryStorage answers one-`=` lookups, the check that an inserted key is free and the
 * largest key (what a POST counts from) through an equality index once a resource is large,
 * with exactly the answers a scan gives, and without reading every entity.
 */

const SIZE = 2_000;

function lookup(uri: string): SelectQuery {
  const conditions = parseUri(uri).conditions;
  return { conditions, predicate: compileConditions(conditions), order: null, offset: 0, limit: -1 };
}

async function selected(storage: MemoryStorage, query: SelectQuery): Promise<Entity[]> {
  const result = await storage.select(query);
  const out: Entity[] = [];
  for await (const e of result.entities) out.push(e);
  return out;
}

/** An entity whose Id counts its reads: a scan reads every entity's Id, a lookup a few. */
function counted(id: number, reads: { n: number }): Entity {
  const e: Entity = { Name: `n${id}` };
  Object.defineProperty(e, 'Id', {
    enumerable: true,
    get() {
      reads.n++;
      return id;
    },
  });
  return e;
}

describe('MemoryStorage equality index', () => {
  test('a lookup by key among many entities runs the condition on the one candidate, not on every entity', async () => {
    const storage = new MemoryStorage(Array.from({ length: SIZE }, (_, i) => ({ Id: i + 1, Name: `n${i + 1}` })));
    const query = lookup('/R/Id=1234');
    const predicate = jest.fn(query.predicate!);
    expect(await selected(storage, { ...query, predicate })).toEqual([{ Id: 1234, Name: 'n1234' }]);
    // The index is built on first use (reading each entity's properties, not the predicate).
    expect(predicate.mock.calls.length).toBe(1);
    const again = jest.fn(lookup('/R/Id=77').predicate!);
    expect(await selected(storage, { ...lookup('/R/Id=77'), predicate: again })).toEqual([{ Id: 77, Name: 'n77' }]);
    expect(again.mock.calls.length).toBe(1);
  });

  test('an insert checks its key against the index: a taken key is a Conflict, a free one reads a few entities', async () => {
    const reads = { n: 0 };
    const storage = new MemoryStorage(Array.from({ length: SIZE }, (_, i) => counted(i + 1, reads)));
    storage.declareKey(['Id']);
    await storage.write({ insert: [{ Id: SIZE + 1 }] });
    reads.n = 0;
    await storage.write({ insert: [{ Id: SIZE + 2 }] });
    expect(reads.n).toBeLessThan(10);
    await expect(storage.write({ insert: [{ Id: 17 }] })).rejects.toMatchObject({ code: 'Conflict' });
    // A string "17" is another key than the number 17 (as without the index).
    await storage.write({ insert: [{ Id: '17' }] });
    expect(await selected(storage, lookup("/R/Id='17'"))).toEqual([{ Id: '17' }]);
  });

  test('the largest key follows inserts, updates and deletes', async () => {
    const service = createService();
    service.addResource({ name: 'Item', key: 'Id', storage: new MemoryStorage(Array.from({ length: SIZE }, (_, i) => ({ Id: i + 1 }))) });
    const post = async () => {
      const r = await service.handle({
        method: 'POST',
        uri: '/Item',
        headers: { 'content-type': 'application/json', accept: 'application/json;raw=true' },
        body: '{}',
      });
      expect(r.status).toBe(201);
      return JSON.parse(String(r.body))[0].Id as number;
    };
    expect(await post()).toBe(SIZE + 1);
    expect(
      (
        await service.handle({
          method: 'PATCH',
          uri: `/Item/${SIZE + 1}`,
          headers: { 'content-type': 'application/json' },
          body: '{"Id":5000}',
        })
      ).status,
    ).toBe(200);
    expect(await post()).toBe(5001);
    expect((await service.handle({ method: 'DELETE', uri: '/Item/Id>=5000/unsafe=true' })).status).toBe(200);
    expect(await post()).toBe(SIZE + 1);
    // A key taken by the index's answer is refused as a scan would refuse it.
    const dup = await service.handle({ method: 'POST', uri: '/Item', headers: { 'content-type': 'application/json' }, body: '{"Id":12}' });
    expect(dup.status).toBe(409);
  });

  test('after any sequence of writes, indexed lookups answer as a scan does', async () => {
    const value = fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constantFrom('3', '7', 'a', 'A', true, null));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('insert' as const), tag: value, id: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('update' as const), at: fc.nat(), tag: value }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
    );
    const literal = fc.constantFrom('3', "'3'", '7', "'7'", 'a', 'A', 'true', 'null', '30', '0');
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), literal, async (ops, text) => {
        const initial = Array.from({ length: 600 }, (_, i) => ({ id: 100 + i, tag: i % 31 }));
        const indexed = new MemoryStorage(initial);
        const scanned = new MemoryStorage(initial, { index: false });
        // Build the index first, so every write below must keep it up to date.
        await selected(indexed, lookup('/R/tag=1'));
        for (const o of ops) {
          const all = (await selected(scanned, SELECT_ALL)) as Entity[];
          const batch =
            o.kind === 'insert'
              ? { insert: [{ id: o.id, tag: o.tag }] }
              : all.length === 0
                ? {}
                : o.kind === 'update'
                  ? { update: [{ target: { entity: all[o.at % all.length] }, value: { ...all[o.at % all.length], tag: o.tag } }] }
                  : { delete: [{ entity: all[o.at % all.length] }] };
          await indexed.write(batch);
          await scanned.write(batch);
        }
        for (const uri of [`/R/tag=${text}`, `/R/TAG=${text}`, `/R/id=${text}`]) {
          expect(await selected(indexed, lookup(uri))).toEqual(await selected(scanned, lookup(uri)));
        }
      }),
      { numRuns: 60 },
    );
  });
});
