import { createService, MemoryStorage, type Entity, type Service, type Storage } from '@resourcery/core';
import { type SelectQuery, type SelectResult } from '@resourcery/core/storage';
import { call, RAW } from './handle-support';

/**
 * The push-down handshake (storage.ts): the service offers conditions, order, offset and
 * limit; a storage applies what it can and says so; the service applies the rest, never
 * a part twice and never a part a storage declined.
 */

const PEOPLE: Entity[] = [
  { Name: 'Ada', Age: 36 },
  { Name: 'Bob', Age: 17 },
  { Name: 'Cy', Age: 52 },
  { Name: 'Dee', Age: 41 },
  { Name: 'Eve', Age: 29 },
];

/** A storage over memory that records what it is asked and applies only the parts it is told to. */
class PartialStorage implements Storage {
  readonly asked: SelectQuery[] = [];
  private readonly memory = new MemoryStorage(PEOPLE);

  constructor(private readonly applies: { conditions: boolean; paging: boolean }) {}

  async select(query: SelectQuery): Promise<SelectResult> {
    this.asked.push(query);
    const { conditions, paging } = this.applies;
    const applied = await this.memory.select({
      ...query,
      predicate: conditions ? query.predicate : null,
      order: conditions && paging ? query.order : null,
      offset: conditions && paging ? query.offset : 0,
      limit: conditions && paging ? query.limit : -1,
    });
    return { entities: applied.entities, conditionsApplied: conditions, pagingApplied: conditions && paging };
  }

  async write(): Promise<void> {
    throw new Error('read-only in this test');
  }
}

function serviceOn(storage: Storage): Service {
  const service = createService();
  service.addResource({ name: 'Person', storage, methods: ['GET', 'REPORT', 'HEAD'] });
  return service;
}

async function get(service: Service, uri: string): Promise<unknown> {
  return (await call(service, 'GET', uri, { headers: RAW })).json;
}

const PAGE = '/Person/Age>20/order_asc=Age&offset=1&limit=2';
// Age>20 ordered by Age: Eve 29, Ada 36, Dee 41, Cy 52 -> offset 1, limit 2: Ada, Dee.
const PAGE_RESULT = [
  { Name: 'Ada', Age: 36 },
  { Name: 'Dee', Age: 41 },
];

describe('a storage that applies order, offset and limit (pagingApplied: true) gets them once', () => {
  test('the service offers the page and does not apply offset or limit again', async () => {
    const storage = new PartialStorage({ conditions: true, paging: true });
    const page = await get(serviceOn(storage), PAGE);
    expect(storage.asked[0]).toMatchObject({ offset: 1, limit: 2 });
    expect(storage.asked[0].order).not.toBeNull();
    expect(page).toEqual(PAGE_RESULT);
  });
});

describe('a storage that declines paging (pagingApplied: false) gets it applied by the service', () => {
  test('order, offset and limit are applied to what the storage returned', async () => {
    const storage = new PartialStorage({ conditions: true, paging: false });
    expect(await get(serviceOn(storage), PAGE)).toEqual(PAGE_RESULT);
  });

  test('a storage that declines conditions too gets everything applied by the service', async () => {
    const storage = new PartialStorage({ conditions: false, paging: false });
    expect(await get(serviceOn(storage), PAGE)).toEqual(PAGE_RESULT);
    expect(await get(serviceOn(storage), '/Person/Age<18')).toEqual([{ Name: 'Bob', Age: 17 }]);
  });
});

describe('paging is not offered where something between the conditions and the order changes the result', () => {
  test('distinct: the storage is asked for everything, the page is cut after distinct', async () => {
    const storage = new PartialStorage({ conditions: true, paging: true });
    const page = await get(serviceOn(storage), '/Person/_/select=Age&distinct=true&order_asc=Age&offset=1&limit=2');
    expect(storage.asked[0]).toMatchObject({ offset: 0, limit: -1 });
    expect(page).toEqual([{ Age: 29 }, { Age: 36 }]);
  });
});

describe('REPORT counts what the same GET would return', () => {
  test.each([
    ['/Person', 5],
    ['/Person/_/offset=2', 3],
    ['/Person/_/limit=2', 2],
    ['/Person/_/offset=4&limit=5', 1],
    ['/Person/Age>20/offset=1', 3],
    ['/Person/_/offset=-2', 2],
  ])('%s counts %i', async (uri, count) => {
    for (const applies of [
      { conditions: true, paging: true },
      { conditions: false, paging: false },
    ]) {
      expect((await call(serviceOn(new PartialStorage(applies)), 'REPORT', uri, { headers: RAW })).json).toBe(count);
    }
    // MemoryStorage has a fast count(): offset and limit still apply.
    const memory = createService();
    memory.addResource({ name: 'Person', storage: new MemoryStorage(PEOPLE) });
    expect((await call(memory, 'REPORT', uri, { headers: RAW })).json).toBe(count);
  });
});
