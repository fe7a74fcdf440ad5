import { createService, MemoryStorage, type Entity } from '@resourcery/core';
import type { SelectQuery } from '@resourcery/core/storage';
import { call } from './handle-support';

/** Relations and embed (docs/relations.md). */

/** MemoryStorage that counts the selects the service makes. */
class Counting extends MemoryStorage {
  selects: SelectQuery[] = [];
  select(query: SelectQuery) {
    this.selects.push(query);
    return super.select(query);
  }
}

const CUSTOMERS: Entity[] = [
  { Id: 1, Name: 'Ann', City: 'Oslo', Secret: 's1' },
  { Id: 2, Name: 'Bo', City: 'Rome', Secret: 's2' },
  { Id: 3, Name: 'Cy', City: 'Oslo', Secret: 's3' },
];
const ORDERS: Entity[] = [
  { Id: 13, CustomerId: 1, Total: 50 },
  { Id: 11, CustomerId: 1, Total: 200 },
  { Id: 12, CustomerId: 2, Total: 80 },
  { Id: 14, CustomerId: 9, Total: 5 },
  { Id: 15, CustomerId: null, Total: 7 },
];

function shop(options: { maxEmbedded?: number } = {}) {
  const s = createService({ maxEmbedded: options.maxEmbedded });
  const customers = new Counting(structuredClone(CUSTOMERS));
  const orders = new Counting(structuredClone(ORDERS));
  s.addResource({
    name: 'Customer',
    key: 'Id',
    storage: customers,
    relations: { Orders: { toMany: 'Order', via: 'CustomerId' } },
  });
  s.addResource({
    name: 'Order',
    key: 'Id',
    storage: orders,
    relations: { Customer: { toOne: 'Customer', via: 'CustomerId' } },
  });
  return { s, customers, orders };
}

const ids = (list: Entity[]) => list.map((e) => e.Id);

describe('declaring relations', () => {
  test('a relation named like a declared property is refused at declaration', () => {
    const s = createService();
    expect(() =>
      s.addResource({
        name: 'Order',
        schema: { type: 'object', properties: { Customer: { type: 'string' } } },
        relations: { customer: { toOne: 'Customer', via: 'CustomerId' } },
      }),
    ).toThrow(/'customer' is a property of 'Order'/);
  });

  test('malformed definitions are refused at declaration', () => {
    const s = createService();
    const bad = (relations: any) => () => s.addResource({ name: `R${Math.random()}`.replace('.', ''), relations });
    expect(bad({ X: { toOne: 'A', toMany: 'B', via: 'a' } })).toThrow(/exactly one of toOne/);
    expect(bad({ X: { toOne: 'A', via: ['a', 'b'] } })).toThrow(/'via' names one property/);
    expect(bad({ X: { toOne: 'A', via: 'a', maxEmbedded: 3 } })).toThrow(/belongs to a toMany/);
    expect(bad({ 'X.Y': { toOne: 'A', via: 'a' } })).toThrow(/letters, digits/);
  });

  test('embed of a name that is no relation is 400 naming the relations', async () => {
    const { s } = shop();
    const r = await call(s, 'GET', '/Order/_/embed=Buyer');
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidMetaConditionValueType');
    expect(r.json.Message).toMatch(/'Buyer' in embed is no relation of 'Order'. Relations: Customer/);
  });

  test('a meta-condition that reads a relation not embedded is 400 saying to embed it', async () => {
    const { s } = shop();
    const r = await call(s, 'GET', '/Order/_/select=Id,Customer.Name');
    expect(r.status).toBe(400);
    expect(r.json.Message).toMatch(/embed=Customer/);
  });
});

describe('embed', () => {
  test('to-one: the related entity under the relation name, or null', async () => {
    const { s } = shop();
    const r = await call(s, 'GET', '/Order/_/embed=customer');
    expect(r.status).toBe(200);
    const byId = new Map(r.json.Data.map((o: Entity) => [o.Id, o]));
    expect((byId.get(13) as Entity).Customer).toEqual(CUSTOMERS[0]);
    expect((byId.get(12) as Entity).Customer).toEqual(CUSTOMERS[1]);
    expect((byId.get(14) as Entity).Customer).toBeNull();
    expect((byId.get(15) as Entity).Customer).toBeNull();
  });

  test("to-many: an array in the related resource's key order, empty when none", async () => {
    const { s } = shop();
    const r = await call(s, 'GET', '/Customer/_/embed=Orders');
    expect(r.json.Data.map((c: Entity) => [c.Id, ids(c.Orders as Entity[])])).toEqual([
      [1, [11, 13]],
      [2, [12]],
      [3, []],
    ]);
  });

  test('one select per relation per response, whatever the number of entities', async () => {
    const { s, customers, orders } = shop();
    orders.selects = [];
    customers.selects = [];
    await call(s, 'GET', '/Order/_/embed=Customer');
    expect(customers.selects).toHaveLength(1);
    customers.selects = [];
    orders.selects = [];
    await call(s, 'GET', '/Customer/_/embed=Orders');
    expect(orders.selects).toHaveLength(1);
  });

  test('to-many arrays hold at most maxEmbedded (the service option, or the relation own)', async () => {
    const { s } = shop({ maxEmbedded: 1 });
    const r = await call(s, 'GET', '/Customer/1/embed=Orders');
    expect(ids(r.json.Data[0].Orders)).toEqual([11]);
    const own = createService({ maxEmbedded: 1 });
    own.addResource({ name: 'Order', key: 'Id', storage: new MemoryStorage(structuredClone(ORDERS)) });
    own.addResource({
      name: 'Customer',
      key: 'Id',
      storage: new MemoryStorage(structuredClone(CUSTOMERS)),
      relations: {
        Orders: { toMany: 'Order', via: 'CustomerId', maxEmbedded: 0 },
        AllOrders: { toMany: 'Order', via: 'CustomerId', maxEmbedded: 5 },
      },
    });
    const both = await call(own, 'GET', '/Customer/1/embed=Orders,AllOrders');
    expect([both.json.Data[0].Orders, ids(both.json.Data[0].AllOrders)]).toEqual([[], [11, 13]]);
    expect(() => createService({ maxEmbedded: -1 })).toThrow(/maxEmbedded/);
  });

  test('select, add and order read embedded values (select=Id,Customer.Name, add=Orders.Length)', async () => {
    const { s } = shop();
    let r = await call(s, 'GET', '/Order/Id<14/embed=Customer&select=Id,Customer.Name&order_asc=Customer.Name,Id');
    expect(r.json.Data).toEqual([
      { Id: 11, 'Customer.Name': 'Ann' },
      { Id: 13, 'Customer.Name': 'Ann' },
      { Id: 12, 'Customer.Name': 'Bo' },
    ]);
    r = await call(s, 'GET', '/Customer/_/embed=orders&add=orders.length&select=Id&order_desc=Orders.Length&limit=2');
    expect(r.json.Data).toEqual([
      { Id: 1, 'Orders.Length': 2 },
      { Id: 2, 'Orders.Length': 1 },
    ]);
  });

  test('embedding after paging: only the page is embedded', async () => {
    const { s, customers } = shop();
    customers.selects = [];
    const r = await call(s, 'GET', '/Order/_/embed=Customer&order_desc=Total&limit=1');
    expect(r.json.Data).toEqual([{ ...ORDERS[1], Customer: CUSTOMERS[0] }]);
    const inList = customers.selects[0].conditions[0];
    expect('anyOf' in inList).toBe(false);
  });

  test('distinct and count=true see the embedded values', async () => {
    const { s } = shop();
    const r = await call(s, 'GET', '/Order/_/embed=Customer&select=Customer.City&distinct=true&count=true');
    expect(r.json.Data).toEqual([{ 'Customer.City': 'Oslo' }, { 'Customer.City': 'Rome' }, { 'Customer.City': null }]);
    expect(r.json.TotalCount).toBe(3);
  });
});

describe('conditions through a relation', () => {
  test('to-one: the related entity property', async () => {
    const { s } = shop();
    const r = await call(s, 'GET', '/Order/Customer.City=Oslo');
    expect(ids(r.json.Data)).toEqual([13, 11]);
  });

  test('to-many: true when any related entity satisfies it', async () => {
    const { s } = shop();
    expect(ids((await call(s, 'GET', '/Customer/Orders.Total>=80')).json.Data)).toEqual([1, 2]);
    expect(ids((await call(s, 'GET', '/Customer/Orders.Total>100')).json.Data)).toEqual([1]);
  });

  test('alternatives mix own and related properties; nothing related matches: 204', async () => {
    const { s } = shop();
    expect(ids((await call(s, 'GET', '/Order/Customer.Name=Bo|Total<10')).json.Data)).toEqual([12, 14, 15]);
    expect((await call(s, 'GET', '/Order/Customer.Name=Nobody')).status).toBe(204);
  });

  test('a condition on the relation itself is 400 naming a property form', async () => {
    const { s } = shop();
    const r = await call(s, 'GET', '/Order/Customer=1');
    expect(r.status).toBe(400);
    expect(r.json.Message).toMatch(/Customer\.Id=1/);
  });

  test('DELETE and PATCH select through relations too; PUT is 400', async () => {
    const { s } = shop();
    const patched = await call(s, 'PATCH', '/Order/Customer.Name=Bo', { body: { Total: 81 } });
    expect(patched.status).toBe(200);
    const deleted = await call(s, 'DELETE', '/Order/Customer.City=Oslo/unsafe=true');
    expect(deleted.json.DeletedCount).toBe(2);
    expect(ids((await call(s, 'GET', '/Order')).json.Data)).toEqual([12, 14, 15]);
    expect((await call(s, 'GET', '/Order/12')).json.Data[0].Total).toBe(81);
    expect((await call(s, 'PUT', '/Order/Customer.Name=Bo', { body: { Total: 1 } })).status).toBe(400);
  });
});

describe('rights: embedding shows nothing the caller cannot GET directly', () => {
  function guarded() {
    const s = createService({
      authenticate: (req) => req.headers['x-user'] ?? 'anon',
    });
    s.addResource({
      name: 'Customer',
      key: 'Id',
      storage: new MemoryStorage(structuredClone(CUSTOMERS)),
      toOutput: ({ Secret: _secret, ...rest }) => rest,
      rules: {
        allow: (caller) => caller.principal !== 'blocked',
        rows: (caller) => (caller.principal === 'oslo' ? 'City=Oslo' : caller.principal === 'pred' ? (e) => e.Name !== 'Ann' : null),
      },
      relations: { Orders: { toMany: 'Order', via: 'CustomerId' } },
    });
    s.addResource({
      name: 'Order',
      key: 'Id',
      storage: new MemoryStorage(structuredClone(ORDERS)),
      rules: { rows: (caller) => (caller.principal === 'oslo' ? 'Total>=50' : null) },
      relations: { Customer: { toOne: 'Customer', via: 'CustomerId' } },
    });
    return s;
  }

  test.each(['anon', 'oslo', 'pred'])('%s: every embedded entity is one its direct GET shows, as shown', async (user) => {
    const s = guarded();
    const headers = { 'x-user': user };
    const direct = (await call(s, 'GET', '/Customer', { headers })).json?.Data ?? [];
    const orders = (await call(s, 'GET', '/Order/_/embed=Customer', { headers })).json.Data as Entity[];
    for (const o of orders) {
      if (o.Customer !== null) expect(direct).toContainEqual(o.Customer);
      else expect(direct.find((c: Entity) => c.Id === o.CustomerId)).toBeUndefined();
    }
    const directOrders = (await call(s, 'GET', '/Order', { headers })).json?.Data ?? [];
    const customers = ((await call(s, 'GET', '/Customer/_/embed=Orders', { headers })).json?.Data ?? []) as Entity[];
    for (const c of customers) for (const o of c.Orders as Entity[]) expect(directOrders).toContainEqual(o);
    // Conditions through a relation see only what the caller may read, too.
    const byCity = (await call(s, 'GET', '/Order/Customer.City=Rome', { headers })).json?.Data ?? [];
    expect(byCity.length > 0).toBe(direct.some((c: Entity) => c.City === 'Rome') && directOrders.some((o: Entity) => o.CustomerId === 2));
    const bySecret = await call(s, 'GET', '/Order/Customer.Secret=s1', { headers });
    expect(bySecret.status).toBe(204);
  });

  test('the rules of the related resource: oslo sees only Oslo customers embedded', async () => {
    const s = guarded();
    const r = await call(s, 'GET', '/Order/_/embed=Customer', { headers: { 'x-user': 'oslo' } });
    expect(r.json.Data.map((o: Entity) => [o.Id, (o.Customer as Entity | null)?.Name ?? null])).toEqual([
      [13, 'Ann'],
      [11, 'Ann'],
      [12, null],
    ]);
  });

  test('embedding a resource the caller may not GET is 403', async () => {
    const s = createService();
    s.addResource({ name: 'Customer', key: 'Id', rules: { allow: () => false } });
    s.addResource({ name: 'Order', key: 'Id', relations: { Customer: { toOne: 'Customer', via: 'CustomerId' } } });
    await call(s, 'POST', '/Order', { body: { Id: 1, CustomerId: 1 } });
    expect((await call(s, 'GET', '/Order/_/embed=Customer')).status).toBe(403);
    expect((await call(s, 'GET', '/Order/Customer.Id=1')).status).toBe(403);
    // Refused too when there is nothing to embed: no order found, or orders that reference no customer.
    expect((await call(s, 'GET', '/Order/Id=99/embed=Customer')).status).toBe(403);
    await call(s, 'POST', '/Order', { body: { Id: 2 } });
    expect((await call(s, 'GET', '/Order/Id=2/embed=Customer')).status).toBe(403);
    expect((await call(s, 'GET', '/Order/Id=2/embed=Customer&count=true')).status).toBe(403);
  });
});
