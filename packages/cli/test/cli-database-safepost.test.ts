import { EVERY, storages } from './storages-support';

/**
 * safepost on a keyed resource matched on a property that is not the key: its inserts get
 * their key as POST's do (generated, unique), on every storage (docs/uri.md, safepost).
 */

const DATA = {
  pets: [
    { id: 1, name: 'Rex', chip: 'A1' },
    { id: 2, name: 'Tom', chip: 'B2' },
  ],
  incoming: [
    { chip: 'B2', name: 'Tommy' },
    { chip: 'C3', name: 'Kit' },
  ],
};

const on = storages();

describe.each(EVERY)('safepost on a keyed resource (%s storage, %s)', (kind, transport) => {
  test('a mixed batch updates by the match property and inserts with generated keys', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    const r = await call('POST', '/pets/_/safepost=chip', [
      { chip: 'B2', name: 'Tommy' },
      { chip: 'C3', name: 'Kit' },
      { chip: 'D4', name: 'Bo' },
      // A later entity with the match of an earlier new one updates it before it is stored.
      { chip: 'C3', age: 3 },
    ]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      { id: 2, name: 'Tommy', chip: 'B2' },
      { id: 3, name: 'Kit', chip: 'C3', age: 3 },
      { id: 4, name: 'Bo', chip: 'D4' },
    ]);
    expect((await call('GET', '/pets/_/order_asc=id')).json).toEqual([
      { id: 1, name: 'Rex', chip: 'A1' },
      { id: 2, name: 'Tommy', chip: 'B2' },
      { id: 3, name: 'Kit', chip: 'C3', age: 3 },
      { id: 4, name: 'Bo', chip: 'D4' },
    ]);
    // The generated keys address them, and the next insert (safepost or POST) takes the next key.
    expect((await call('GET', '/pets/4')).json).toEqual([{ id: 4, name: 'Bo', chip: 'D4' }]);
    expect((await call('POST', '/pets/_/safepost=chip', { chip: 'E5' })).json).toEqual([{ chip: 'E5', id: 5 }]);
    expect((await call('POST', '/pets', { chip: 'F6' })).json).toEqual([{ chip: 'F6', id: 6 }]);
  });

  test('one new entity at a time keeps getting keys; a given key that is taken is 409', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    for (const chip of ['X1', 'X2', 'X3']) expect((await call('POST', '/pets/_/safepost=chip', { chip })).status).toBe(200);
    expect((await call('GET', '/pets/id>2/select=id,chip')).json).toEqual([
      { id: 3, chip: 'X1' },
      { id: 4, chip: 'X2' },
      { id: 5, chip: 'X3' },
    ]);
    expect((await call('POST', '/pets/_/safepost=chip', { chip: 'Z9', id: 1 })).status).toBe(409);
    expect((await call('GET', '/pets/chip=Z9')).status).toBe(204);
  });

  test('Source and Destination upsert through safepost with keys generated', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    const sourced = await call('POST', '/pets/_/safepost=chip', undefined, {
      accept: 'application/json',
      source: 'GET /incoming/_/order_asc=chip',
    });
    expect(sourced.json).toMatchObject({ InsertedCount: 1, UpdatedCount: 1 });
    expect((await call('GET', '/pets/chip=C3')).json).toEqual([{ id: 3, chip: 'C3', name: 'Kit' }]);

    await call('PATCH', '/incoming/chip=C3', { name: 'Kitty' });
    await call('POST', '/incoming', { chip: 'D4', name: 'Bo' });
    const sent = await call('GET', '/incoming/_/order_asc=chip', undefined, {
      accept: 'application/json',
      destination: 'POST /pets/_/safepost=chip',
    });
    expect(sent.status).toBe(200);
    expect((await call('GET', '/pets/_/order_asc=id')).json).toEqual([
      { id: 1, name: 'Rex', chip: 'A1' },
      { id: 2, name: 'Tommy', chip: 'B2' },
      { id: 3, chip: 'C3', name: 'Kitty' },
      { id: 4, chip: 'D4', name: 'Bo' },
    ]);
  });
});
