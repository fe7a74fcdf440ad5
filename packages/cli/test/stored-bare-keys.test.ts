import { storages, type StorageName, type Transport } from './storages-support';

/**
 * A bare key in a stored URI (a macro's Uri, a webhook's Destination, a custom payload's
 * URI) is read with the same knowledge of the resource as a request's (docs/keys.md), and
 * again when it is called; after a macro (`/$cats/7`) it addresses the key within the
 * macro's conditions.
 */

const DATA = {
  vets: [
    { id: 'ana', Name: 'Ana' },
    { id: 'bo', Name: 'Bo' },
  ],
  patients: [
    { id: 7, Name: 'Tom', Species: 'cat' },
    { id: 8, Name: 'Rex', Species: 'dog' },
    { id: 9, Name: 'Kit', Species: 'cat' },
  ],
  notes: [{ text: 'no key here' }],
};

const MACROS = '/Service.Admin.Macro';
const HOOKS = '/Service.Admin.Webhook';
const on = storages();

const EACH: Array<[StorageName, Transport]> = [
  ['memory', 'handle'],
  ['memory', 'http'],
  ['file', 'handle'],
  ['file', 'http'],
];

describe.each(EACH)('bare keys in stored URIs (%s storage, %s)', (kind, transport) => {
  test('a macro whose Uri holds a bare key is saved and called', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    expect((await call('POST', MACROS, { Name: 'ana', Uri: '/vets/ana' })).status).toBe(201);
    expect((await call('GET', '/$ana')).json).toEqual([{ id: 'ana', Name: 'Ana' }]);
    expect((await call('POST', MACROS, { Name: 'tom', Uri: '/patients/7/select=Name' })).status).toBe(201);
    expect((await call('GET', '/$tom')).json).toEqual([{ Name: 'Tom' }]);
    // The rest of the URI must still parse, and a resource without a key has no bare value.
    const nested = await call('POST', MACROS, { Name: 'nested', Uri: '/vets/ana/patients' });
    expect(nested.status).toBe(400);
    expect(nested.json.Message).toMatch(/Uri does not parse/);
    const keyless = await call('POST', MACROS, { Name: 'keyless', Uri: '/notes/1' });
    expect(keyless.status).toBe(400);
    expect(keyless.json.Message).toMatch(/declares a key/);
  });

  test('a bare key after a macro addresses the key within its conditions', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    expect((await call('POST', MACROS, { Name: 'cats', Uri: '/patients/Species=cat/select=id,Name' })).status).toBe(201);
    expect((await call('GET', '/$cats/7')).json).toEqual([{ id: 7, Name: 'Tom' }]);
    // Rex is a dog: outside the macro's conditions.
    expect((await call('GET', '/$cats/8')).status).toBe(204);
    expect((await call('GET', '/$cats/9/select=Name')).json).toEqual([{ Name: 'Kit' }]);
    // A macro over a macro: the key of the resource the chain ends at.
    expect((await call('POST', MACROS, { Name: 'kit', Uri: '/$cats/9' })).status).toBe(201);
    expect((await call('GET', '/$kit')).json).toEqual([{ id: 9, Name: 'Kit' }]);
    expect((await call('POST', MACROS, { Name: 'notes', Uri: '/notes' })).status).toBe(201);
    expect((await call('GET', '/$notes/1')).status).toBe(400);
  });

  test('a webhook Destination and a CustomPayloadRequest URI may hold a bare key, and are delivered there', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    const hook = await call('POST', HOOKS, {
      Method: 'PATCH',
      Destination: '/vets/ana',
      EventSelector: '/patients.Updated',
      CustomPayloadRequest: { URI: '/patients/8/select=Name' },
    });
    expect(hook.status).toBe(201);
    expect((await call('PATCH', '/patients/7', { Species: 'lion' })).status).toBe(200);
    // Delivery runs after the answer: wait for it, bounded.
    let vet: unknown;
    for (let i = 0; i < 100; i++) {
      vet = (await call('GET', '/vets/ana')).json;
      if ((vet as Array<{ Name: string }>)[0].Name === 'Rex') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(vet).toEqual([{ id: 'ana', Name: 'Rex' }]);
    const keyless = await call('POST', HOOKS, { Method: 'PATCH', Destination: '/notes/1', EventSelector: '/patients.Updated' });
    expect(keyless.status).toBe(400);
  });
});
