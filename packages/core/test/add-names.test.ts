import { createService, MemoryStorage, type Caller, type ResourceRules } from '@resourcery/core';
import { call, RAW } from './handle-support';

/**
 * The output name of an `add` value is one per resource and caller (docs/uri.md, "Output
 * names"): the schema's spelling, else the first entity the caller may read that has it,
 * else the caller's; never what the other entities of one result hold.
 */

const addedKeys = (json: Array<Record<string, unknown>>) => json.map((e) => Object.keys(e).filter((k) => k.includes('.')));

test('a schema spells the name, whether or not any entity has the property', async () => {
  const service = createService();
  service.addResource({
    name: 'Pets',
    key: 'Id',
    schema: {
      type: 'object',
      properties: { Id: { type: 'integer' }, Notes: { type: ['string', 'null'] }, Tags: { type: 'array', items: { type: 'string' } } },
    },
    storage: new MemoryStorage([{ Id: 1 }, { Id: 2, Notes: null }]),
  });
  const r = await call(service, 'GET', '/Pets/_/add=notes.length,tags.length', { headers: RAW });
  expect(r.json).toEqual([
    { Id: 1, 'Notes.Length': null, 'Tags.Length': null },
    { Id: 2, Notes: null, 'Notes.Length': null, 'Tags.Length': null },
  ]);
});

test('a dotted select is named as the resource spells it, also on an entity that lacks it', async () => {
  const service = createService();
  service.addResource({
    name: 'People',
    key: 'Id',
    storage: new MemoryStorage([
      { Id: 1, Address: { City: 'Oslo' } },
      { Id: 2, Address: null },
      { Id: 3, address: { city: 'Rome' } },
    ]),
  });
  const get = async (uri: string) => (await call(service, 'GET', uri, { headers: RAW })).json;
  expect(await get('/People/Id=2/select=Id,address.city')).toEqual([{ Id: 2, 'Address.City': null }]);
  expect(await get('/People/Id=3/select=Id,ADDRESS.CITY')).toEqual([{ Id: 3, 'Address.City': 'Rome' }]);
  expect(await get('/People/_/order_desc=Id&select=Id,address.city')).toEqual([
    { Id: 3, 'Address.City': 'Rome' },
    { Id: 2, 'Address.City': null },
    { Id: 1, 'Address.City': 'Oslo' },
  ]);
  // A renamed or added name is the request's, as before.
  expect(await get('/People/Id=1/rename=Address->Home&select=Id,home.city')).toEqual([{ Id: 1, 'Home.City': 'Oslo' }]);
});

type Rows = ResourceRules['rows'];
const byConditions: Rows = (caller: Caller) => (caller.principal === 'admin' ? undefined : `Owner=${caller.principal}`);
const byPredicate: Rows = (caller: Caller) => (caller.principal === 'admin' ? undefined : (e) => e.Owner === caller.principal);

describe.each([
  ['conditions', byConditions],
  ['a predicate', byPredicate],
])('with a row rule given as %s', (_kind, rows) => {
  const serve = (toOutput?: (e: Record<string, unknown>) => Record<string, unknown>) => {
    const service = createService({ authenticate: (request) => request.headers['x-user'] ?? 'nobody' });
    service.addResource({
      name: 'Notes',
      key: 'Id',
      storage: new MemoryStorage([
        { Id: 1, Owner: 'bob', TEXT: 'hidden' },
        { Id: 2, Owner: 'ann', text: null },
        { Id: 3, Owner: 'ann', Text: 'mine' },
      ]),
      rules: { rows },
      toOutput,
    });
    return (user: string, uri: string) => call(service, 'GET', uri, { headers: { ...RAW, 'x-user': user } });
  };

  test("the name comes from the rows the caller may read, not from another's", async () => {
    const as = serve();
    // ann cannot read bob's TEXT: her names come from her own rows (entity 3, since 2's is null).
    expect(addedKeys((await as('ann', '/Notes/Id=2/add=text.length')).json)).toEqual([['Text.Length']]);
    expect(addedKeys((await as('ann', '/Notes/_/add=text.length')).json)).toEqual([['Text.Length'], ['Text.Length']]);
    // The admin reads every row: the first one's spelling, for every entity.
    expect(addedKeys((await as('admin', '/Notes/Id=3/add=text.length')).json)).toEqual([['TEXT.Length']]);
    // A caller who may read no row gets no entity to name.
    expect(await as('nobody', '/Notes/_/add=text.length')).toMatchObject({ status: 204 });
  });

  test('through toOutput, the output form is what is spelled', async () => {
    const as = serve((e) => ({ Id: e.Id, Owner: e.Owner, Body: e.TEXT ?? e.text ?? e.Text }));
    expect(addedKeys((await as('ann', '/Notes/Id=2/add=body.length')).json)).toEqual([['Body.Length']]);
    expect(addedKeys((await as('admin', '/Notes/Id=1/add=body.length')).json)).toEqual([['Body.Length']]);
  });
});
