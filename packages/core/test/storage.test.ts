import { MemoryStorage, ServiceError, type Entity, type Storage } from '@resourcery/core';
import { ComputedStorage, Locator, SELECT_ALL, type SelectQuery, type Target } from '@resourcery/core/storage';
import { compile } from './query-support';

const seed = (): Entity[] => [
  { Id: 1, Name: 'Ann', Age: 30 },
  { Id: 2, Name: 'Bo', Age: 25 },
  { Id: 3, Name: 'Cy', Age: 30 },
  { Id: 4, Name: 'Dee', Age: 41 },
];

/** A select query with the given conditions pushed down, plus order and paging. */
function query(conditions = '_', paging: Partial<Pick<SelectQuery, 'order' | 'offset' | 'limit'>> = {}): SelectQuery {
  const q = compile(conditions);
  return { conditions: q.conditions, predicate: q.predicate, order: null, offset: 0, limit: -1, ...paging };
}

/** A write target as the service makes it: the entity as select returned it, with its stamp. */
const t = (storage: MemoryStorage, entity: Entity): Target => ({ entity, stamp: storage.stamp(entity) });
/** A target without a stamp (a storage wrapper that does not pass stamps on): found by the object itself. */
const bare = (entity: Entity): Target => ({ entity });

const order = (locator: string, descending = false) => ({ locator: new Locator(locator), descending });

async function selectIds(storage: MemoryStorage | ComputedStorage, q: SelectQuery): Promise<unknown[]> {
  const result = await storage.select(q);
  expect(result).toMatchObject({ conditionsApplied: true, pagingApplied: true });
  return [...(result.entities as Iterable<Entity>)].map((e) => e.Id);
}

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (e) {
    if (ServiceError.is(e)) return e;
    throw e;
  }
  throw new Error('expected a ServiceError');
}

describe('MemoryStorage.select: storage order without push-down', () => {
  test('every entity, in insertion order', async () => {
    expect(await selectIds(new MemoryStorage(seed()), SELECT_ALL)).toEqual([1, 2, 3, 4]);
  });

  test('the initial array is copied: changing it later does not change the storage', async () => {
    const data = seed();
    const storage = new MemoryStorage(data);
    data.pop();
    expect(await selectIds(storage, SELECT_ALL)).toEqual([1, 2, 3, 4]);
  });
});

describe('MemoryStorage.select: conditions, order, offset and limit pushed down', () => {
  const storage = new MemoryStorage(seed());

  test('conditions', async () => {
    expect(await selectIds(storage, query('Age=30'))).toEqual([1, 3]);
    expect(await selectIds(storage, query('Age>26&Name!=Cy'))).toEqual([1, 4]);
  });

  test('order is stable: ties keep storage order, ascending and descending', async () => {
    expect(await selectIds(storage, query('_', { order: order('Age') }))).toEqual([2, 1, 3, 4]);
    expect(await selectIds(storage, query('_', { order: order('age', true) }))).toEqual([4, 1, 3, 2]);
  });

  test('offset and limit page the ordered result', async () => {
    expect(await selectIds(storage, query('_', { order: order('Age', true), offset: 1, limit: 2 }))).toEqual([1, 3]);
    expect(await selectIds(storage, query('Age>=30', { order: order('Name', true), offset: 0, limit: 1 }))).toEqual([4]);
  });

  test('offset and limit without order page storage order', async () => {
    expect(await selectIds(storage, query('_', { offset: 2 }))).toEqual([3, 4]);
    expect(await selectIds(storage, query('_', { offset: 1, limit: 2 }))).toEqual([2, 3]);
    expect(await selectIds(storage, query('_', { limit: 0 }))).toEqual([]);
  });
});

describe('MemoryStorage.count', () => {
  test('counts every entity or those matching the predicate', async () => {
    const storage = new MemoryStorage(seed());
    expect(await storage.count({ predicate: null })).toBe(4);
    expect(await storage.count({ predicate: compile('Age=30').predicate })).toBe(2);
    expect(await storage.count({ predicate: compile('Age>100').predicate })).toBe(0);
  });
});

describe('MemoryStorage.write: inserts append, updates keep positions, deletes remove', () => {
  test('inserts are appended in order', async () => {
    const storage = new MemoryStorage(seed());
    await storage.write({ insert: [{ Id: 5 }, { Id: 6 }] });
    expect(storage.all().map((e) => e.Id)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test('an update replaces the entity at its position', async () => {
    const storage = new MemoryStorage(seed());
    const target = storage.all()[1];
    await storage.write({ update: [{ target: t(storage, target), value: { Id: 2, Name: 'Bob', Age: 26 } }] });
    expect(storage.all()[1]).toEqual({ Id: 2, Name: 'Bob', Age: 26 });
    expect(storage.all().map((e) => e.Id)).toEqual([1, 2, 3, 4]);
  });

  test('an update does not mutate the object that was handed out', async () => {
    const storage = new MemoryStorage(seed());
    const [target] = (await storage.select(query('Id=1'))).entities as Entity[];
    await storage.write({ update: [{ target: t(storage, target), value: { ...target, Age: 31 } }] });
    expect(target.Age).toBe(30);
  });

  test('insert, update and delete in one batch are applied together', async () => {
    const storage = new MemoryStorage(seed());
    const [ann, bo, cy] = storage.all();
    await storage.write({
      insert: [{ Id: 5 }],
      update: [{ target: t(storage, cy), value: { Id: 3, Name: 'Cyd' } }],
      delete: [t(storage, ann), bare(bo)],
    });
    expect(storage.all()).toEqual([{ Id: 3, Name: 'Cyd' }, { Id: 4, Name: 'Dee', Age: 41 }, { Id: 5 }]);
  });

  test('an empty batch changes nothing', async () => {
    const storage = new MemoryStorage(seed());
    await storage.write({});
    expect(storage.all()).toEqual(seed());
  });
});

describe('MemoryStorage.write is all-or-nothing', () => {
  test('a batch whose update target is not stored throws and changes nothing', async () => {
    const storage = new MemoryStorage(seed());
    const before = [...storage.all()];
    const [ann] = storage.all();
    await rejection(
      storage.write({
        insert: [{ Id: 9 }],
        update: [{ target: bare({ ...ann }), value: { Id: 1, Name: 'X' } }],
        delete: [t(storage, storage.all()[3])],
      }),
    );
    expect(storage.all()).toEqual(before);
  });

  test('a batch that deletes an entity that is not stored throws and changes nothing', async () => {
    const storage = new MemoryStorage(seed());
    const before = [...storage.all()];
    await rejection(storage.write({ insert: [{ Id: 9 }], delete: [bare({ Id: 1, Name: 'Ann', Age: 30 })] }));
    expect(storage.all()).toEqual(before);
  });

  test('an entity read before another write replaced it is no longer a valid target', async () => {
    const storage = new MemoryStorage(seed());
    const stale = storage.all()[0];
    const read = t(storage, stale);
    await storage.write({ update: [{ target: read, value: { Id: 1, Name: 'First' } }] });
    await rejection(storage.write({ update: [{ target: read, value: { Id: 1, Name: 'Second' } }] }));
    await rejection(storage.write({ update: [{ target: bare(stale), value: { Id: 1, Name: 'Second' } }] }));
    expect(storage.all()[0]).toEqual({ Id: 1, Name: 'First' });
  });
});

describe('ComputedStorage: a read-only listing computed on every select', () => {
  test('select computes the entities each time and applies the query', async () => {
    let rows: Entity[] = seed();
    const storage = new ComputedStorage(() => rows);
    expect(await selectIds(storage, query('Age=30'))).toEqual([1, 3]);
    rows = [...rows, { Id: 5, Age: 30 }];
    expect(await selectIds(storage, query('Age=30', { order: order('Id', true), limit: 2 }))).toEqual([5, 3]);
  });

  test('an async computation works the same', async () => {
    const storage = new ComputedStorage(async () => seed());
    expect(await selectIds(storage, query('_', { offset: 3 }))).toEqual([4]);
  });

  test('write is refused with 405 MethodNotAllowed', async () => {
    const storage: Storage = new ComputedStorage(() => seed());
    for (const batch of [{ insert: [{ Id: 9 }] }, { delete: seed().map(bare) }, {}]) {
      const e = await rejection(storage.write(batch));
      expect([e.code, e.status]).toEqual(['MethodNotAllowed', 405]);
    }
  });
});
