import { EVERY, storages } from './storages-support';

/**
 * An unquoted number against a string value is a mixed pair (docs/uri.md, "Values"): `=`
 * false, `!=` true, ordering false; a quoted literal compares text. The same answers on
 * every storage (the core's scan, the CLI file's index, SQL); a bare key still finds a key
 * stored as a string.
 */

const DATA = {
  products: [
    { id: 1, Name: 'Tea', Price: '8.00', Cost: '60', Zip: '02139' },
    { id: 2, Name: 'Pot', Price: 12, Cost: 2000, Zip: 2139 },
    { id: 3, Name: 'Cup', Price: 'abc', Cost: '1500' },
    { id: 4, Name: 'Mug', Price: 8, Cost: null },
  ],
  vets: [
    { id: 'ana', Name: 'Ana' },
    { id: '7', Name: 'Seven' },
  ],
};

const CASES: Array<[string, number[]]> = [
  ['Price>10', [2]],
  ['Price<100', [2, 4]],
  ['Price=8.00', [4]],
  ['Price=8', [4]],
  ['Price!=8.00', [1, 2, 3]],
  ['Price>=8', [2, 4]],
  ["Price='8.00'", [1]],
  ['Price="8.00"', [1]],
  ["Price>'10'", [1, 3]],
  ['Cost>1000', [2]],
  ['Cost<=1000', []],
  ['Cost!=60', [1, 2, 3, 4]],
  ['Zip=02139', [2]],
  ["Zip='02139'", [1]],
  ['Zip!=02139', [1, 3, 4]],
  // Words and booleans still compare with a string's text; plain numbers with numbers.
  ['Name=Tea', [1]],
  ['id>2', [3, 4]],
];

const on = storages();

describe.each(EVERY)('an unquoted number against a string (%s storage, %s)', (kind, transport) => {
  test('is a mixed pair: = false, != true, ordering false; quoted compares text', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    const found: Record<string, number[]> = {};
    for (const [condition] of CASES) {
      const r = await call('GET', `/products/${condition}/order_asc=id&select=id`);
      found[condition] = r.status === 204 ? [] : (r.json as Array<{ id: number }>).map((e) => e.id);
    }
    expect(found).toEqual(Object.fromEntries(CASES));
  });

  test('a bare key finds a key stored as a string; a condition on it is a mixed pair', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    expect((await call('GET', '/vets/7')).json).toEqual([{ id: '7', Name: 'Seven' }]);
    expect((await call('GET', '/vets/ana')).json).toEqual([{ id: 'ana', Name: 'Ana' }]);
    expect((await call('GET', '/vets/id=7')).status).toBe(204);
    expect((await call('GET', "/vets/id='7'")).json).toEqual([{ id: '7', Name: 'Seven' }]);
    expect((await call('PATCH', '/vets/7', { Name: 'Sept' })).json).toEqual([{ id: '7', Name: 'Sept' }]);
  });
});
