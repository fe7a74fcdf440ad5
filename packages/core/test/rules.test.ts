import { createService, MemoryStorage, ServiceError, type Caller, type ResourceRules, type Service } from '@resourcery/core';
import { type SelectQuery } from '@resourcery/core/storage';
import { call, RAW } from './handle-support';

/** Row-level rules and allow/deny by principal (DESIGN 13). */

const ORDERS = [
  { Id: 1, Owner: 'ann', Item: 'tea', Qty: 2 },
  { Id: 2, Owner: 'ann', Item: 'cake', Qty: 1 },
  { Id: 3, Owner: 'bob', Item: 'tea', Qty: 5 },
];

type Rows = ResourceRules['rows'];
const byConditions: Rows = (caller: Caller) => (caller.principal === 'admin' ? undefined : `Owner=${encodeURIComponent(caller.principal)}`);
const byPredicate: Rows = (caller: Caller) => (caller.principal === 'admin' ? undefined : (e) => e.Owner === caller.principal);

function shop(rows: Rows): { service: Service; storage: MemoryStorage; selects: SelectQuery[] } {
  const service = createService({
    authenticate: (request, context?: { user: string }) => context?.user ?? request.headers['x-user'] ?? 'nobody',
    // Macros and webhooks open to every caller here: what they may do is the caller's rights (docs/security.md).
    admin: { rules: { allow: () => true } },
  });
  const storage = new MemoryStorage(ORDERS.map((o) => ({ ...o })));
  const selects: SelectQuery[] = [];
  service.addResource({
    name: 'Shop.Order',
    schema: {
      type: 'object',
      properties: { Id: { type: 'integer' }, Owner: { type: 'string' }, Item: { type: 'string' }, Qty: { type: 'integer' } },
    },
    storage: {
      select: (q) => {
        selects.push(q);
        return storage.select(q);
      },
      write: (b) => storage.write(b),
    },
    rules: { rows, allow: (caller, method) => method !== 'DELETE' || caller.principal !== 'guest' },
  });
  return { service, storage, selects };
}

function as(user: string, service: Service, method: string, uri: string, body?: unknown) {
  return call(service, method, uri, { headers: { ...RAW, 'x-user': user }, body });
}

const ids = (res: { status: number; json: any }) => (res.status === 204 ? [] : res.json.map((e: { Id: number }) => e.Id).sort());

describe.each([
  ['conditions in the URI syntax', byConditions],
  ['a predicate', byPredicate],
])('a row rule given as %s', (_kind, rows) => {
  let s: ReturnType<typeof shop>;
  beforeEach(() => {
    s = shop(rows);
  });
  const stored = () => s.storage.all().map((e) => ({ ...e }));

  test("GET returns only the caller's rows, also when the request names a hidden one", async () => {
    expect(ids(await as('ann', s.service, 'GET', '/Order'))).toEqual([1, 2]);
    expect(ids(await as('ann', s.service, 'GET', '/Order/Id=3'))).toEqual([]);
    expect(ids(await as('ann', s.service, 'GET', '/Order/_/order_desc=Qty&limit=1'))).toEqual([1]);
    expect(ids(await as('admin', s.service, 'GET', '/Order'))).toEqual([1, 2, 3]);
  });

  test("REPORT counts only the caller's rows", async () => {
    expect((await as('bob', s.service, 'REPORT', '/Order')).json).toBe(1);
    expect((await as('bob', s.service, 'REPORT', '/Order/Item=tea')).json).toBe(1);
    expect((await as('admin', s.service, 'REPORT', '/Order/Item=tea')).json).toBe(2);
  });

  test('search finds nothing in hidden rows', async () => {
    expect(ids(await as('bob', s.service, 'GET', '/Order/_/search=cake'))).toEqual([]);
    expect(ids(await as('bob', s.service, 'GET', '/Order/_/search=tea'))).toEqual([3]);
  });

  test('PATCH and PUT never update a hidden row', async () => {
    const before = stored();
    // A hidden row is not found, as a missing one: 404, nothing said about it.
    const patch = await as('ann', s.service, 'PATCH', '/Order/Id=3', { Qty: 99 });
    expect(patch.json?.ErrorCode).toBe('NotFound');
    expect(patch.json?.Message).toBe((await as('ann', s.service, 'PATCH', '/Order/Id=404', { Qty: 99 })).json?.Message);
    expect(stored()).toEqual(before);
    await as('ann', s.service, 'PATCH', '/Order/Item=tea/unsafe=true', { Qty: 7 });
    expect(stored().map((e) => e.Qty)).toEqual([7, 1, 5]);
    const put = await as('ann', s.service, 'PUT', '/Order/Id=3', { Owner: 'ann', Item: 'pie', Qty: 1 });
    expect(put.status).toBe(201);
    expect(stored().find((e) => e.Owner === 'bob')).toEqual(ORDERS[2]);
  });

  test('DELETE never deletes a hidden row', async () => {
    expect((await as('ann', s.service, 'DELETE', '/Order/Item=tea/unsafe=true')).status).toBe(200);
    expect(stored().map((e) => e.Id)).toEqual([2, 3]);
    expect((await as('ann', s.service, 'DELETE', '/Order/Id=3')).status).toBe(200);
    expect(stored().map((e) => e.Id)).toEqual([2, 3]);
  });

  test('a write into rows the caller may not see is 403, and nothing is stored', async () => {
    const post = await as('ann', s.service, 'POST', '/Order', { Id: 9, Owner: 'bob', Item: 'gift', Qty: 1 });
    expect([post.status, post.json.ErrorCode]).toEqual([403, 'Forbidden']);
    const move = await as('ann', s.service, 'PATCH', '/Order/Id=1', { Owner: 'bob' });
    expect(move.status).toBe(403);
    expect(stored()).toEqual(ORDERS);
  });

  test("safepost never matches a hidden row: it inserts the caller's own instead", async () => {
    const res = await as('ann', s.service, 'POST', '/Order/_/safepost=Item', [
      { Owner: 'ann', Item: 'tea', Qty: 3 },
      { Id: 4, Owner: 'ann', Item: 'jam', Qty: 1 },
    ]);
    expect(res.json?.ErrorCode).toBeUndefined();
    expect(stored().find((e) => e.Id === 3)).toEqual(ORDERS[2]);
    expect(stored().find((e) => e.Id === 1)!.Qty).toBe(3);
    expect(stored().map((e) => e.Id)).toEqual([1, 2, 3, 4]);
    const bob = await as('bob', s.service, 'POST', '/Order/_/safepost=Item', [{ Id: 5, Owner: 'bob', Item: 'cake', Qty: 8 }]);
    expect(bob.json.ErrorCode).toBeUndefined();
    expect(stored().find((e) => e.Id === 2)!.Qty).toBe(1);
  });

  test("a macro runs with the caller's rows", async () => {
    expect((await as('admin', s.service, 'POST', '/Service.Admin.Macro', { Name: 'tea', Uri: '/Shop.Order/Item=tea' })).status).toBe(201);
    expect(ids(await as('ann', s.service, 'GET', '/$tea'))).toEqual([1]);
    expect(ids(await as('bob', s.service, 'GET', '/$tea'))).toEqual([3]);
  });

  test("a Source copy reads only the caller's rows (the local request carries the caller's context)", async () => {
    s.service.addResource({ name: 'Copy' });
    const res = await s.service.handle(
      { method: 'POST', uri: '/Copy', headers: { source: 'GET /Shop.Order' } },
      { context: { user: 'bob' } },
    );
    expect(res.status).toBeLessThan(300);
    expect(ids(await as('admin', s.service, 'GET', '/Copy'))).toEqual([3]);
  });
});

describe("conditions rules reach storage with the request's conditions", () => {
  test('the rule comes first in the SelectQuery, so SQL storage pushes it down', async () => {
    const s = shop(byConditions);
    await as('ann', s.service, 'GET', '/Order/Item=tea');
    expect(s.selects.at(-1)!.conditions.map((c) => c.text)).toEqual(['Owner=ann', 'Item=tea']);
  });

  test('a value with URI-syntax characters is encoded and matched literally', async () => {
    const s = shop(byConditions);
    await s.storage.write({ insert: [{ Id: 7, Owner: 'a&b', Item: 'x', Qty: 1 }] });
    expect(ids(await as('a&b', s.service, 'GET', '/Order'))).toEqual([7]);
  });

  test('a rule that is not a list of conditions is a 500 naming the resource', async () => {
    const errors: ServiceError[] = [];
    const service = createService({
      onError: (e) => {
        errors.push(e);
      },
    });
    service.addResource({ name: 'Broken', rules: { rows: () => 'Id=1/limit=3' } });
    expect((await call(service, 'GET', '/Broken')).status).toBe(500);
    expect(errors[0].message).toMatch(/row rule 'Id=1\/limit=3' of 'Broken'/);
  });
});

describe('allow decides per method and principal', () => {
  test('a denied method is 403 and changes nothing', async () => {
    const s = shop(byConditions);
    const res = await as('guest', s.service, 'DELETE', '/Order/Id=1');
    expect([res.status, res.json.ErrorCode]).toEqual([403, 'Forbidden']);
    expect(s.storage.all()).toHaveLength(3);
    expect((await as('admin', s.service, 'DELETE', '/Order/Id=1')).status).toBe(200);
  });
});

describe("a webhook delivers only the rows its author may read (the author's rule is kept with it)", () => {
  const hook = (user: string, service: Service, inbox: string, selector = '/Shop.Order.Inserted') =>
    as(user, service, 'POST', '/Service.Admin.Webhook', { Destination: `/${inbox}`, EventSelector: selector });
  const received = async (service: Service, inbox: string) => {
    await service.webhooks.idle();
    return ids(await as('admin', service, 'GET', `/${inbox}`));
  };

  test("inserted and deleted rows outside the author's rows are never sent", async () => {
    const s = shop(byConditions);
    s.service.addResource({ name: 'AnnInbox', events: false });
    s.service.addResource({ name: 'AdminInbox', events: false });
    expect((await hook('ann', s.service, 'AnnInbox')).status).toBe(201);
    expect((await hook('ann', s.service, 'AnnInbox', '/Shop.Order.Deleted')).status).toBe(201);
    expect((await hook('admin', s.service, 'AdminInbox')).status).toBe(201);
    await as('admin', s.service, 'POST', '/Order', [
      { Id: 10, Owner: 'bob', Item: 'tea', Qty: 1 },
      { Id: 11, Owner: 'ann', Item: 'jam', Qty: 1 },
    ]);
    expect(await received(s.service, 'AnnInbox')).toEqual([11]);
    expect(await received(s.service, 'AdminInbox')).toEqual([10, 11]);
    await as('admin', s.service, 'DELETE', '/Order/Id=3');
    expect(await received(s.service, 'AnnInbox')).toEqual([11]);
    await as('admin', s.service, 'POST', '/Order', { Id: 12, Owner: 'bob', Item: 'pie', Qty: 1 });
    expect(await received(s.service, 'AnnInbox')).toEqual([11]);
  });

  test('the kept rule is never output, and whoever saves the webhook last makes it theirs', async () => {
    const s = shop(byConditions);
    s.service.addResource({ name: 'Inbox', events: false });
    const id = (await hook('ann', s.service, 'Inbox')).json[0].Id;
    const shown = await as('admin', s.service, 'GET', `/Service.Admin.Webhook/Id=${id}`);
    expect(Object.keys(shown.json[0])).not.toContain('Rows');
    expect((await as('bob', s.service, 'PATCH', `/Service.Admin.Webhook/Id=${id}`, { Label: 'mine', Rows: null })).status).toBe(200);
    await as('admin', s.service, 'POST', '/Order', [
      { Id: 10, Owner: 'bob', Item: 'tea', Qty: 1 },
      { Id: 11, Owner: 'ann', Item: 'jam', Qty: 1 },
    ]);
    expect(await received(s.service, 'Inbox')).toEqual([10]);
  });

  test('an author whose rows are a predicate may not save a webhook on those events (403); one who sees every row may', async () => {
    const s = shop(byPredicate);
    s.service.addResource({ name: 'Inbox', events: false });
    const res = await hook('ann', s.service, 'Inbox');
    expect([res.status, res.json.ErrorCode]).toEqual([403, 'Forbidden']);
    expect(res.json.Message).toMatch(/predicate/);
    expect((await hook('admin', s.service, 'Inbox')).status).toBe(201);
  });
});
