import fc from 'fast-check';
import { createService, MemoryStorage, type Entity } from '@resourcery/core';
import { compileConditions, Locator, parseUri, type SelectQuery, type StorageIndex, type WriteBatch } from '@resourcery/core/storage';
import { call } from './handle-support';

/**
 * A MemoryStorage index declared on some properties keeps the entities sorted by them, so
 * an order on exactly those properties reads its page off the index: the same answers as
 * the scan (ties in storage order, both directions, conditions, offset, limit), through
 * every write (docs/storage.md#indexes).
 */

const index = (...names: string[]): StorageIndex => ({ properties: names.map((name) => ({ name })), unique: false, ignoreCase: false });

function query(keys: Array<[string, boolean]>, page: { offset?: number; limit?: number; where?: string } = {}): SelectQuery {
  const conditions = page.where === undefined ? [] : parseUri(`/R/${page.where}`).conditions;
  const [first, ...rest] = keys.map(([text, descending]) => ({ locator: new Locator(text), descending }));
  return {
    conditions,
    predicate: conditions.length === 0 ? null : compileConditions(conditions),
    order: first,
    thenBy: rest,
    offset: page.offset ?? 0,
    limit: page.limit ?? -1,
  };
}

async function selected(storage: MemoryStorage, q: SelectQuery): Promise<Entity[]> {
  const result = await storage.select(q);
  expect(result.conditionsApplied && result.pagingApplied).toBe(true);
  return [...(result.entities as Iterable<Entity>)];
}

/** An entity whose `Age` counts its reads: a scan reads every entity's, a page off the index none. */
function counted(id: number, age: number, reads: { n: number }): Entity {
  const e: Entity = { Id: id, Name: `n${(id * 7919) % 1000}` };
  Object.defineProperty(e, 'Age', {
    enumerable: true,
    get() {
      reads.n++;
      return age;
    },
  });
  return e;
}

describe('MemoryStorage order index', () => {
  test('a page in the declared order is read off the index: no entity is read once it is built', async () => {
    const reads = { n: 0 };
    const entities = Array.from({ length: 3000 }, (_, i) => counted(i + 1, i % 70, reads));
    const indexed = new MemoryStorage(entities);
    indexed.useIndexes([index('Age', 'Name')]);
    const plain = new MemoryStorage(entities);
    const q = query(
      [
        ['Age', false],
        ['Name', false],
      ],
      { offset: 5, limit: 10 },
    );
    const expected = await selected(plain, q);
    expect(reads.n).toBeGreaterThanOrEqual(3000);
    expect(await selected(indexed, q)).toEqual(expected);
    reads.n = 0;
    expect(await selected(indexed, q)).toEqual(expected);
    expect(reads.n).toBe(0);
    // Descending: only the groups of equal keys the page reaches are read.
    const down = query(
      [
        ['Age', true],
        ['Name', true],
      ],
      { limit: 10 },
    );
    const downExpected = await selected(plain, down);
    reads.n = 0;
    expect(await selected(indexed, down)).toEqual(downExpected);
    expect(reads.n).toBeLessThan(200);
    // Another order (one key, mixed directions) is the scan's.
    reads.n = 0;
    await selected(indexed, query([['Age', false]], { limit: 10 }));
    expect(reads.n).toBeGreaterThanOrEqual(3000);
  });

  test('a large resource is sorted in slices: the scan answers meanwhile, and writes made meanwhile are replayed', async () => {
    const reads = { n: 0 };
    const entities = Array.from({ length: 30_000 }, (_, i) => counted(i + 1, i % 70, reads));
    const indexed = new MemoryStorage(entities);
    indexed.useIndexes([index('Age', 'Name')]);
    const plain = new MemoryStorage(entities);
    const q = query(
      [
        ['Age', true],
        ['Name', true],
      ],
      { offset: 20, limit: 30 },
    );
    // Declared: the sort goes on in slices from the next turn; until it is done the scan answers.
    expect(await selected(indexed, q)).toEqual(await selected(plain, q));
    let turns = 0;
    for (let served = false; !served; turns++) {
      expect(turns).toBeLessThan(5000);
      // Writes between the slices: an insert at the front of the order, an update, a delete.
      if (turns < 3) {
        const batch: WriteBatch =
          turns === 0
            ? { insert: [counted(100_000, -1, reads)] }
            : turns === 1
              ? { update: [{ target: { entity: entities[10] }, value: { Id: 11, Age: 999, Name: 'last' } }] }
              : { delete: [{ entity: entities[20] }] };
        await indexed.write(batch);
        await plain.write(batch);
      }
      await new Promise((resolve) => setImmediate(resolve));
      reads.n = 0;
      const page = await selected(indexed, q);
      served = reads.n < 1000;
      expect(page).toEqual(await selected(plain, q));
    }
    expect(turns).toBeGreaterThan(3);
    for (const keys of [
      [
        ['Age', false],
        ['Name', false],
      ],
      [
        ['Age', true],
        ['Name', true],
      ],
    ] as Array<Array<[string, boolean]>>) {
      for (const page of [{ limit: 5 }, { offset: 29_990 }]) {
        const r = query(keys, page);
        expect(await selected(indexed, r)).toEqual(await selected(plain, r));
      }
    }
  });

  test('through the service: a declared index serves order_asc on its properties, any spelling while entities spell them as declared', async () => {
    const service = createService();
    const people = Array.from({ length: 40 }, (_, i) => ({ Id: i + 1, Age: i % 4, Name: `p${(i * 13) % 40}` }));
    service.addResource({ name: 'Person', storage: new MemoryStorage(people), indexes: [['Age', 'Name']] });
    const reference = createService();
    reference.addResource({ name: 'Person', storage: new MemoryStorage(people) });
    for (const uri of [
      '/Person/_/order_asc=Age,Name&limit=7',
      '/Person/_/order_desc=age,name&offset=3&limit=5',
      '/Person/Id>10/order_asc=AGE,Name&limit=4',
      '/Person/_/order_asc=Age,Name&select=Name&offset=38',
    ]) {
      const [got, want] = await Promise.all([call(service, 'GET', uri), call(reference, 'GET', uri)]);
      expect(got.status).toBe(200);
      expect(got.json.Data).toEqual(want.json.Data);
    }
    // A write is followed in the turn it is acknowledged.
    expect((await call(service, 'POST', '/Person', { body: { Id: 99, Age: -1, Name: 'first' } })).status).toBe(201);
    expect((await call(service, 'GET', '/Person/_/order_asc=Age,Name&limit=1')).json.Data).toEqual([{ Id: 99, Age: -1, Name: 'first' }]);
    expect((await call(service, 'DELETE', '/Person/Id=99')).status).toBeLessThan(300);
    expect((await call(service, 'GET', '/Person/_/order_asc=Age,Name&limit=1')).json.Data[0].Id).not.toBe(99);
  });

  test('an entity spelling an indexed property otherwise leaves other spellings to the scan, with the same answers', async () => {
    const entities: Entity[] = [
      { Id: 1, age: 3 },
      { Id: 2, Age: 1 },
      { Id: 3, Age: 2 },
    ];
    const indexed = new MemoryStorage(entities);
    indexed.useIndexes([index('Age')]);
    const plain = new MemoryStorage(entities);
    for (const text of ['Age', 'age', 'AGE']) {
      for (const descending of [false, true]) {
        const q = query([[text, descending]]);
        expect(await selected(indexed, q)).toEqual(await selected(plain, q));
      }
    }
  });

  // Values of every rank (missing, null, booleans, numbers, strings beyond U+FFFF, objects), few of them, so ties abound.
  const value = fc.oneof(
    fc.constantFrom(undefined, null, true, false, 0, 1, 2, -1, 1.5, '', 'a', 'B', 'b', 'aa', '\u{1F600}', '\uE000'),
    fc.constant({ x: 1 }),
  );
  const entity = fc.record({ A: value, B: value, C: value });
  const op = fc.oneof(
    // Lengths of every size up to past SPLICE_MAX (64 changes), where a write is merged in one pass.
    fc.record({ kind: fc.constant('insert' as const), values: fc.array(entity, { minLength: 1, maxLength: 90, size: 'max' }) }),
    fc.record({
      kind: fc.constant('update' as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 80, size: 'max' }),
      values: fc.array(entity, { minLength: 80, maxLength: 80 }),
    }),
    fc.record({ kind: fc.constant('delete' as const), picks: fc.array(fc.nat(), { minLength: 1, maxLength: 70, size: 'max' }) }),
  );
  const KEYS: Array<Array<[string, boolean]>> = [
    [['A', false]],
    [['A', true]],
    [
      ['A', false],
      ['B', false],
    ],
    [
      ['a', true],
      ['b', true],
    ],
    [
      ['A', false],
      ['B', true],
    ],
    [
      ['B', false],
      ['A', false],
    ],
  ];
  const read = fc.record({
    offset: fc.nat({ max: 60 }),
    limit: fc.constantFrom(-1, 0, 1, 3, 20),
    where: fc.constantFrom(undefined, 'C=1', 'C!=null', 'B>0'),
  });

  test('random writes (spliced and merged) and reads: the same answers as without the index', async () => {
    let serial = 0;
    const make = (v: { A: unknown; B: unknown; C: unknown }): Entity => {
      const e: Entity = { Id: ++serial };
      for (const k of ['A', 'B', 'C'] as const) if (v[k] !== undefined) e[k] = v[k];
      return e;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(entity, { maxLength: 120, size: 'max' }),
        fc.array(fc.tuple(op, read), { minLength: 1, maxLength: 12 }),
        async (initial, steps) => {
          const start = initial.map(make);
          const indexed = new MemoryStorage(start);
          indexed.useIndexes([index('A'), index('A', 'B')]);
          const plain = new MemoryStorage(start);
          // Sorted when declared (a small resource: at once), so the writes below are followed, not sorted afresh.
          for (const [o, r] of steps) {
            const stored = plain.all();
            let batch: WriteBatch;
            if (o.kind === 'insert') batch = { insert: o.values.map(make) };
            else if (stored.length === 0) batch = {};
            else {
              const targets = [...new Set(o.picks.map((p) => stored[p % stored.length]))];
              batch =
                o.kind === 'delete'
                  ? { delete: targets.map((entity) => ({ entity })) }
                  : { update: targets.map((entity, i) => ({ target: { entity }, value: { ...make(o.values[i]), Id: entity.Id } })) };
            }
            await indexed.write(batch);
            await plain.write(batch);
            for (const keys of KEYS) {
              const q = query(keys, r);
              expect(await selected(indexed, q)).toEqual(await selected(plain, q));
            }
          }
        },
      ),
      { numRuns: 120, endOnFailure: true },
    );
  });
});
