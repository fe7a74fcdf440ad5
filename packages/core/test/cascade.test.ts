import { createService, MemoryStorage, type Entity, type RaisedEvent, type RelationDefinition } from '@resourcery/core';
import { call } from './handle-support';

/** A DELETE and relations' onDelete (docs/relations.md#deleting). */

const CUSTOMERS: Entity[] = [
  { Id: 1, Name: 'Ann' },
  { Id: 2, Name: 'Bo' },
  { Id: 3, Name: 'Cy' },
];
const ORDERS: Entity[] = [
  { Id: 11, CustomerId: 1, Total: 200 },
  { Id: 12, CustomerId: 2, Total: 80 },
  { Id: 13, CustomerId: 1, Total: 50 },
];
const LINES: Entity[] = [
  { Id: 101, OrderId: 11 },
  { Id: 102, OrderId: 11 },
  { Id: 103, OrderId: 12 },
  { Id: 104, OrderId: 13 },
];

type OnDelete = 'cascade' | 'restrict' | undefined;

function shop(orders: OnDelete, lines: OnDelete = 'cascade') {
  const s = createService({ authenticate: (req) => req.headers['x-user'] ?? 'anon' });
  const log: string[] = [];
  const seen: RaisedEvent[] = [];
  s.events.subscribe((e) => {
    seen.push(e);
  });
  const many = (toMany: string, via: string, onDelete: OnDelete): RelationDefinition =>
    onDelete === undefined ? { toMany, via } : { toMany, via, onDelete };
  s.addResource({
    name: 'Customer',
    key: 'Id',
    storage: new MemoryStorage(structuredClone(CUSTOMERS)),
    relations: { Orders: many('Order', 'CustomerId', orders) },
  });
  s.addResource({
    name: 'Order',
    key: 'Id',
    storage: new MemoryStorage(structuredClone(ORDERS)),
    relations: { Lines: many('Line', 'OrderId', lines) },
    hooks: {
      beforeDelete: (entities) => void log.push(`before Order ${entities.map((e) => e.Id).join(',')}`),
      afterDelete: (entities) => void log.push(`after Order ${entities.map((e) => e.Id).join(',')}`),
    },
    rules: {
      allow: (caller, method) => !(caller.principal === 'reader' && method === 'DELETE'),
      rows: (caller, method) => (caller.principal === 'big' && method === 'DELETE' ? 'Total>=60' : null),
    },
  });
  s.addResource({ name: 'Line', key: 'Id', storage: new MemoryStorage(structuredClone(LINES)) });
  const ids = async (resource: string) => ((await call(s, 'GET', `/${resource}`)).json?.Data ?? []).map((e: Entity) => e.Id);
  return { s, log, seen, ids };
}

describe("onDelete: 'cascade'", () => {
  test('deleting a customer deletes its orders and their lines, each resource raising its Deleted event', async () => {
    const { s, log, seen, ids } = shop('cascade');
    const res = await call(s, 'DELETE', '/Customer/1');
    expect(res.status).toBe(200);
    expect(res.json.DeletedCount).toBe(1);
    expect(await ids('Customer')).toEqual([2, 3]);
    expect(await ids('Order')).toEqual([12]);
    expect(await ids('Line')).toEqual([103]);
    // The deepest first; the related resource's hooks run as on a direct DELETE.
    expect(seen.map((e) => [e.name, (e.entities ?? []).map((x) => x.Id)])).toEqual([
      ['Line.Deleted', [101, 102, 104]],
      ['Order.Deleted', [11, 13]],
      ['Customer.Deleted', [1]],
    ]);
    expect(log).toEqual(['before Order 11,13', 'after Order 11,13']);
  });

  test('a parent without related entities deletes as before; without onDelete nothing related is touched', async () => {
    const cascading = shop('cascade');
    expect((await call(cascading.s, 'DELETE', '/Customer/3')).status).toBe(200);
    expect(await cascading.ids('Order')).toEqual([11, 12, 13]);
    const plain = shop(undefined);
    expect((await call(plain.s, 'DELETE', '/Customer/1')).status).toBe(200);
    expect(await plain.ids('Customer')).toEqual([2, 3]);
    expect(await plain.ids('Order')).toEqual([11, 12, 13]);
  });

  test('a caller who may not DELETE the related resource is refused 403, nothing deleted', async () => {
    const { s, seen, ids } = shop('cascade');
    const res = await call(s, 'DELETE', '/Customer/1', { headers: { 'x-user': 'reader' } });
    expect(res.status).toBe(403);
    expect(res.json.Message).toMatch(/'Orders'.*may not delete from 'Order'.*nothing was deleted/);
    expect(await ids('Customer')).toEqual([1, 2, 3]);
    expect(await ids('Order')).toEqual([11, 12, 13]);
    expect(seen).toEqual([]);
    // The same caller's direct DELETE of an order is refused too.
    expect((await call(s, 'DELETE', '/Order/12', { headers: { 'x-user': 'reader' } })).status).toBe(403);
  });

  test("a related entity outside the caller's DELETE rows refuses the whole DELETE (403), as its direct DELETE would not reach it", async () => {
    const { s, ids } = shop('cascade');
    const big = { headers: { 'x-user': 'big' } };
    // Customer 1 has order 13 (Total 50), outside Total>=60.
    const refused = await call(s, 'DELETE', '/Customer/1', big);
    expect(refused.status).toBe(403);
    expect(refused.json.Message).toMatch(/outside the rows the caller may delete from 'Order'/);
    expect(await ids('Order')).toEqual([11, 12, 13]);
    expect(await ids('Line')).toEqual([101, 102, 103, 104]);
    // Customer 2's only order (80) is inside: deleted with its line.
    expect((await call(s, 'DELETE', '/Customer/2', big)).status).toBe(200);
    expect(await ids('Order')).toEqual([11, 13]);
    expect(await ids('Line')).toEqual([101, 102, 104]);
  });

  test('a restrict further down refuses the cascade above it (409), nothing deleted', async () => {
    const { s, ids } = shop('cascade', 'restrict');
    const res = await call(s, 'DELETE', '/Customer/2');
    expect(res.status).toBe(409);
    expect(res.json.Message).toMatch(/'Order' still has related entities in its relation 'Lines'/);
    expect(await ids('Customer')).toEqual([1, 2, 3]);
    expect(await ids('Order')).toEqual([11, 12, 13]);
  });

  test('a relation to the same resource deletes a whole tree, and a cycle ends', async () => {
    const s = createService();
    s.addResource({
      name: 'Category',
      key: 'Id',
      storage: new MemoryStorage([
        { Id: 1, ParentId: null },
        { Id: 2, ParentId: 1 },
        { Id: 3, ParentId: 2 },
        { Id: 4, ParentId: null },
        { Id: 5, ParentId: 6 },
        { Id: 6, ParentId: 5 },
      ]),
      relations: { Children: { toMany: 'Category', via: 'ParentId', onDelete: 'cascade' } },
    });
    expect((await call(s, 'DELETE', '/Category/1')).status).toBe(200);
    expect((await call(s, 'GET', '/Category')).json.Data.map((e: Entity) => e.Id)).toEqual([4, 5, 6]);
    expect((await call(s, 'DELETE', '/Category/5')).status).toBe(200);
    expect((await call(s, 'GET', '/Category')).json.Data.map((e: Entity) => e.Id)).toEqual([4]);
  });
});

describe("onDelete: 'restrict'", () => {
  test('a parent with related entities is 409 Conflict naming the relation, nothing deleted; one without is deleted', async () => {
    const { s, seen, ids } = shop('restrict');
    const res = await call(s, 'DELETE', '/Customer/Id<3/unsafe=true');
    expect(res.status).toBe(409);
    expect(res.json.ErrorCode).toBe('Conflict');
    expect(res.json.Message).toMatch(/'Customer' still has related entities in its relation 'Orders' \(Order, onDelete: 'restrict'\)/);
    expect(await ids('Customer')).toEqual([1, 2, 3]);
    expect(seen).toEqual([]);
    expect((await call(s, 'DELETE', '/Customer/3')).status).toBe(200);
    expect(await ids('Customer')).toEqual([1, 2]);
  });
});

describe('declaring onDelete', () => {
  test('only a to-many relation takes it, and only cascade or restrict', () => {
    const s = createService();
    expect(() =>
      s.addResource({ name: 'Order', relations: { Customer: { toOne: 'Customer', via: 'CustomerId', onDelete: 'cascade' } as never } }),
    ).toThrow(/onDelete belongs to a toMany relation/);
    expect(() =>
      s.addResource({ name: 'Customer', relations: { Orders: { toMany: 'Order', via: 'CustomerId', onDelete: 'nullify' as never } } }),
    ).toThrow(/onDelete is 'cascade' or 'restrict'/);
  });
});
