import fc from 'fast-check';
import { type Entity } from '@resourcery/core';
import { parseUri, toMetaConditions } from '@resourcery/core/storage';
import { caught, compile, ids, run } from './query-support';

const people: Entity[] = [
  { Id: 1, Name: 'Ann', Age: 30, City: 'Oslo', Address: { City: 'Oslo', Zip: '0150' }, Tags: ['x'] },
  { Id: 2, Name: 'Bo', Age: 25, City: 'Rome', Address: { City: 'Rome', Zip: '00100' }, Tags: [] },
  { Id: 3, Name: 'Cy', Age: 30, City: 'Oslo', Address: { City: 'Oslo', Zip: '0151' } },
  { Id: 4, Name: 'Dee', Age: null, City: 'Lima', Address: null, Tags: ['a', 'b'] },
  { Id: 5, Name: 'Ed', City: 'Rome', Address: { City: 'Rome' } },
];

const meta = (text: string) => toMetaConditions(parseUri(`/R/_/${text}`).meta);

describe('limit: no limit by default, limit=0 gives nothing', () => {
  test.each([
    ['_', [1, 2, 3, 4, 5]],
    ['limit=2', [1, 2]],
    ['limit=0', []],
    ['limit=-1', [1, 2, 3, 4, 5]],
    ['limit=10', [1, 2, 3, 4, 5]],
  ])('%s', (m, expected) => {
    expect(ids(people, '_', m)).toEqual(expected);
  });

  test('a repeated name: the last one wins', () => {
    expect(ids(people, '_', 'limit=1&limit=3')).toEqual([1, 2, 3]);
  });
});

describe('offset skips the first N; a negative offset keeps the last N', () => {
  test.each([
    ['offset=2', [3, 4, 5]],
    ['offset=-2', [4, 5]],
    ['offset=-10', [1, 2, 3, 4, 5]],
    ['offset=10', []],
    ['offset=1&limit=2', [2, 3]],
    ['offset=-3&limit=2', [3, 4]],
    ['offset=0', [1, 2, 3, 4, 5]],
  ])('%s', (m, expected) => {
    expect(ids(people, '_', m)).toEqual(expected);
  });
});

describe('order_asc / order_desc: stable, null and missing first ascending', () => {
  test('ascending: null and missing first, ties keep storage order', () => {
    expect(ids(people, '_', 'order_asc=Age')).toEqual([4, 5, 2, 1, 3]);
  });

  test('descending: null and missing last, ties still keep storage order', () => {
    expect(ids(people, '_', 'order_desc=Age')).toEqual([1, 3, 2, 4, 5]);
  });

  test('strings by code point', () => {
    const data = [
      { Id: 1, N: 'b' },
      { Id: 2, N: 'B' },
      { Id: 3, N: 'é' },
      { Id: 4, N: 'a' },
      { Id: 5, N: '\u{1F600}' },
      { Id: 6, N: '\uFF5E' },
    ];
    expect(ids(data, '_', 'order_asc=N')).toEqual([2, 4, 1, 3, 6, 5]);
    expect(ids(data, '_', 'order_desc=N')).toEqual([5, 6, 3, 1, 4, 2]);
  });

  test('the locator is case-insensitive and may be dotted', () => {
    expect(ids(people, '_', 'order_desc=aGE')).toEqual([1, 3, 2, 4, 5]);
    expect(ids(people, '_', 'order_asc=address.city')).toEqual([4, 1, 3, 2, 5]);
    expect(ids(people, '_', 'order_desc=Name.Length')).toEqual([1, 4, 2, 3, 5]);
  });

  test('mixed types are ordered without throwing: null, booleans, numbers, strings, then the rest', () => {
    const data = [
      { Id: 1, V: 'b' },
      { Id: 2, V: 3 },
      { Id: 3, V: true },
      { Id: 4, V: null },
      { Id: 5, V: { a: 1 } },
      { Id: 6, V: 'a' },
      { Id: 7, V: -1 },
      { Id: 8, V: [1] },
    ];
    expect(ids(data, '_', 'order_asc=V')).toEqual([4, 3, 7, 2, 6, 1, 5, 8]);
    expect(ids(data, '_', 'order_desc=V')).toEqual([5, 8, 1, 6, 2, 7, 3, 4]);
  });

  test('order_asc and order_desc together are two keys, the first written primary (no longer the last one alone)', () => {
    expect(ids(people, '_', 'order_asc=City&order_desc=Id')).toEqual([4, 3, 1, 5, 2]);
    expect(ids(people, '_', 'order_desc=Id&order_asc=City')).toEqual([5, 4, 3, 2, 1]);
    expect(ids(people, '_', 'order_asc=Name&order_asc=City')).toEqual([4, 1, 3, 2, 5]);
  });
});

describe('select: the listed properties, in the listed order, spelled as the data spells them', () => {
  test('listed order', () => {
    expect(Object.keys(run(people, 'Id=1', 'select=Name,Id')[0])).toEqual(['Name', 'Id']);
  });

  test("case is canonicalized to the data's spelling", () => {
    expect(run(people, 'Id=1', 'select=NAME,iD')).toEqual([{ Name: 'Ann', Id: 1 }]);
  });

  test('a dotted locator is output under its canonical dotted name', () => {
    // Alone, an entity that lacks it is named as the request spells it (never after the
    // entities before it); a resource names it for all (add-names.test.ts).
    expect(run(people, '_', 'select=Id,address.city')).toEqual([
      { Id: 1, 'Address.City': 'Oslo' },
      { Id: 2, 'Address.City': 'Rome' },
      { Id: 3, 'Address.City': 'Oslo' },
      { Id: 4, 'address.city': null },
      { Id: 5, 'Address.City': 'Rome' },
    ]);
    expect(run(people, 'Id=2', 'select=name.length')).toEqual([{ 'Name.Length': 2 }]);
  });

  test('a property the entity lacks is output as null', () => {
    expect(run(people, 'Id=2', 'select=Id,Nope')).toEqual([{ Id: 2, Nope: null }]);
  });

  test('an entity that is its own output already (a row a storage cut) is output as it is; any other is picked', () => {
    const cut = { Id: 1, Name: 'Ann' };
    const inherited = Object.assign(Object.create({ Name: 'Ann' }), { Id: 1 });
    const project = compile('_', 'select=Id,Name').project!;
    expect(project(cut)).toBe(cut);
    // Not its own output: another order, another spelling, a key more or less, an inherited key.
    const others: Array<[Entity, Array<[string, unknown]>]> = [
      [
        { Name: 'Ann', Id: 1 },
        [
          ['Id', 1],
          ['Name', 'Ann'],
        ],
      ],
      [
        { id: 1, Name: 'Ann' },
        [
          ['id', 1],
          ['Name', 'Ann'],
        ],
      ],
      [
        { Id: 1, Name: 'Ann', Age: 3 },
        [
          ['Id', 1],
          ['Name', 'Ann'],
        ],
      ],
      [
        { Id: 1 },
        [
          ['Id', 1],
          ['Name', null],
        ],
      ],
      [
        inherited,
        [
          ['Id', 1],
          ['Name', null],
        ],
      ],
    ];
    for (const [entity, entries] of others) {
      const out = project(entity);
      expect(out).not.toBe(entity);
      expect(Object.entries(out)).toEqual(entries);
    }
    // A name listed twice is output once.
    expect(compile('_', 'select=Id,Name,Id').project!(cut)).not.toBe(cut);
    expect(Object.keys(compile('_', 'select=Id,Name,Id').project!(cut))).toEqual(['Id', 'Name']);
    // A dotted name is a path, not a key.
    const flat = { 'Address.City': 'Oslo' };
    expect(compile('_', 'select=Address.City').project!(flat)).not.toBe(flat);
  });
});

describe('add: derived values appended under their canonical name, whatever select lists', () => {
  test('appended at the end under the canonical name', () => {
    const [ann] = run(people, 'Id=1', 'add=name.length,TAGS.length');
    expect(Object.keys(ann)).toEqual([...Object.keys(people[0]), 'Name.Length', 'Tags.Length']);
    expect(ann).toMatchObject({ 'Name.Length': 3, 'Tags.Length': 1 });
  });

  test('added values stay when select does not list them', () => {
    expect(run(people, 'Id<3', 'add=Name.Length&select=Id')).toEqual([
      { Id: 1, 'Name.Length': 3 },
      { Id: 2, 'Name.Length': 2 },
    ]);
  });

  test('a value that cannot be derived is null', () => {
    expect(run(people, 'Id=5', 'add=Tags.Length&select=Id')).toEqual([{ Id: 5, 'Tags.Length': null }]);
  });
});

describe('rename: keeps the key position, the new name is case-sensitive, runs before select', () => {
  test('keeps the key position', () => {
    const [ann] = run(people, 'Id=1', 'rename=Name->Who');
    expect(Object.keys(ann)).toEqual(['Id', 'Who', 'Age', 'City', 'Address', 'Tags']);
    expect(ann.Who).toBe('Ann');
  });

  test('the source is case-insensitive, the new name is kept as written', () => {
    expect(Object.keys(run(people, 'Id=1', 'rename=name->wHO,CITY->town')[0])).toEqual(['Id', 'wHO', 'Age', 'town', 'Address', 'Tags']);
  });

  test('select sees the new name', () => {
    expect(run(people, 'Id=1', 'rename=Name->Who&select=Who,Id')).toEqual([{ Who: 'Ann', Id: 1 }]);
  });

  test('renaming onto an existing name replaces it', () => {
    expect(run([{ A: 1, B: 2, C: 3 }], '_', 'rename=A->B')).toEqual([{ B: 1, C: 3 }]);
  });

  test('renaming an added value renames it in place', () => {
    const [bo] = run(people, 'Id=2', 'add=Name.Length&rename=Name.Length->Len&select=Id');
    expect(bo).toEqual({ Id: 2, Len: 2 });
    expect(Object.keys(run(people, 'Id=2', 'add=Name.Length,Tags.Length&rename=Name.Length->Len')[0]).slice(-2)).toEqual([
      'Len',
      'Tags.Length',
    ]);
  });

  test('a dotted source is output under the new name', () => {
    expect(run(people, 'Id=1', 'rename=Address.City->Town&select=Id,Town')).toEqual([{ Id: 1, Town: 'Oslo' }]);
  });

  test.each([
    'select=Name',
    'select=Id,name',
    'select=Name.Length',
    'order_asc=Name',
    'order_desc=name',
    'order_asc=Name&distinct=true',
    'select=Id&order_asc=Name&distinct=true',
  ])('a renamed-away name in %s is a 400 InvalidMetaConditionSyntax', (m) => {
    const e = caught(() => compile('_', `rename=Name->Who&${m}`));
    expect([e.code, e.status]).toEqual(['InvalidMetaConditionSyntax', 400]);
    expect(e.message).toMatch(/name/i);
  });

  test('a name renamed away and then reused by another rename is valid', () => {
    expect(run([{ A: 1, B: 2 }], '_', 'rename=A->X,B->A&select=A,X')).toEqual([{ A: 2, X: 1 }]);
  });
});

describe('distinct: whole output entities, first occurrence kept, after add, rename and select', () => {
  test('after select', () => {
    expect(run(people, '_', 'select=City&distinct=true')).toEqual([{ City: 'Oslo' }, { City: 'Rome' }, { City: 'Lima' }]);
  });

  test('added values count', () => {
    expect(run(people, '_', 'select=City&add=Name.Length&distinct=true')).toEqual([
      { City: 'Oslo', 'Name.Length': 3 },
      { City: 'Rome', 'Name.Length': 2 },
      { City: 'Oslo', 'Name.Length': 2 },
      { City: 'Lima', 'Name.Length': 3 },
    ]);
  });

  test('renamed values count', () => {
    expect(
      run(
        [
          { A: 1, B: 2 },
          { A: 1, B: 3 },
        ],
        '_',
        'rename=A->B&distinct=true',
      ),
    ).toEqual([{ B: 1 }]);
  });

  test('without select, equal stored entities collapse and the first is kept', () => {
    const data = [
      { Id: 1, V: 1 },
      { Id: 1, V: 1 },
      { Id: 2, V: 1 },
    ];
    expect(run(data, '_', 'distinct=true')).toEqual([
      { Id: 1, V: 1 },
      { Id: 2, V: 1 },
    ]);
    expect(run(data, '_', 'distinct=true')[0]).toBe(data[0]);
    expect(run(data, '_', 'distinct=false')).toHaveLength(3);
  });

  test('then order, offset and limit', () => {
    expect(run(people, '_', 'select=City&distinct=true&order_asc=City&limit=2')).toEqual([{ City: 'Lima' }, { City: 'Oslo' }]);
    expect(run(people, '_', 'select=Address.City&distinct=true&order_desc=Address.City')).toEqual([
      { 'Address.City': 'Rome' },
      { 'Address.City': 'Oslo' },
      { 'Address.City': null },
    ]);
  });
});

describe('unsafe and safepost are parsed', () => {
  test('defaults', () => {
    expect(meta('limit=1')).toMatchObject({ unsafe: false, safepost: null, limit: 1, offset: 0, distinct: false });
  });

  test('values', () => {
    const m = meta('unsafe=TRUE&safepost=Name,address.city');
    expect(m.unsafe).toBe(true);
    expect(m.safepost!.map((l) => l.text)).toEqual(['Name', 'address.city']);
    expect(meta('unsafe=false').unsafe).toBe(false);
  });
});

describe('evaluation order: conditions -> search -> add -> rename -> select -> distinct -> order -> offset -> limit', () => {
  test('conditions see the stored entity, not the renamed one', () => {
    expect(run(people, 'Who=Ann', 'rename=Name->Who')).toEqual([]);
    expect(ids(people, 'Name=Ann', 'rename=Name->Who&select=Id')).toEqual([1]);
  });

  test('search sees the whole stored entity, not the selected properties', () => {
    expect(run(people, '_', 'select=Id&search=oslo')).toEqual([{ Id: 1 }, { Id: 3 }]);
  });

  test('search runs before add: added keys are not searched', () => {
    expect(run(people, '_', 'add=Name.Length&search=Name.Length')).toEqual([]);
  });

  test('add runs before rename: the derived value is computed from the old name', () => {
    expect(run(people, 'Id=1', 'add=Name.Length&rename=Name->Who&select=Who')).toEqual([{ Who: 'Ann', 'Name.Length': 3 }]);
  });

  test('select runs before distinct; distinct before offset', () => {
    expect(run(people, '_', 'select=City&distinct=true&offset=2')).toEqual([{ City: 'Lima' }]);
  });

  test('a property that select leaves out still orders, read from the stored entity', () => {
    const byAgeDesc = [...people]
      .filter((p: any) => typeof p.Age === 'number')
      .sort((a: any, b: any) => b.Age - a.Age)
      .map((p: any) => ({ Id: p.Id }));
    expect(run(people, 'Age!=null', 'select=Id&order_desc=Age')).toEqual(byAgeDesc);
    expect(run(people, 'Age!=null', 'select=Id&order_desc=Age&limit=1')).toEqual(byAgeDesc.slice(0, 1));
  });

  test('order resolves on the output entity, after rename', () => {
    expect(run(people, 'Age!=null', 'rename=Age->Years&select=Id,Years&order_desc=Years')).toEqual([
      { Id: 1, Years: 30 },
      { Id: 3, Years: 30 },
      { Id: 2, Years: 25 },
    ]);
  });

  test('order runs before offset and limit', () => {
    expect(ids(people, '_', 'order_desc=Id&offset=1&limit=2')).toEqual([4, 3]);
  });

  test('offset runs before limit', () => {
    expect(ids(people, '_', 'limit=2&offset=1')).toEqual([2, 3]);
  });

  test('conditions run before limit', () => {
    expect(ids(people, 'City=Rome', 'limit=1')).toEqual([2]);
  });
});

describe('order with offset and limit equals a full stable sort then a slice', () => {
  const entity = fc
    .record({ K: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }), Gone: fc.boolean() })
    .map(({ K, Gone }) => (Gone ? {} : { K }));
  // size 'max': long arrays with small pages take the top-k path, short ones the full sort.
  const data = fc.array(entity, { maxLength: 300, size: 'max' }).map((items) => items.map((e, Id) => ({ Id, ...e }) as Entity));

  function expected(items: Entity[], descending: boolean, offset: number, limit: number): unknown[] {
    const key = (e: Entity) => (e.K ?? null) as number | null;
    const cmp = (a: Entity, b: Entity) => {
      const x = key(a);
      const y = key(b);
      return x === y ? 0 : x === null ? -1 : y === null ? 1 : x - y;
    };
    const sorted = items
      .map((e, i) => ({ e, i }))
      .sort((a, b) => (descending ? cmp(b.e, a.e) : cmp(a.e, b.e)) || a.i - b.i)
      .map((x) => x.e.Id);
    const start = offset >= 0 ? offset : Math.max(0, sorted.length + offset);
    return sorted.slice(start, limit < 0 ? undefined : start + limit);
  }

  test.each(['', '&select=Id,K', '&rename=K->Key&select=Id,Key', '&distinct=true'])('with %s', (extra) => {
    fc.assert(
      fc.property(data, fc.boolean(), fc.integer({ min: -8, max: 20 }), fc.integer({ min: -1, max: 12 }), (items, desc, offset, limit) => {
        const orderKey = extra.includes('Key') ? 'Key' : 'K';
        const got = ids(items, '_', `order_${desc ? 'desc' : 'asc'}=${orderKey}&offset=${offset}&limit=${limit}${extra}`);
        expect(got).toEqual(expected(items, desc, offset, limit));
      }),
      { numRuns: 300 },
    );
  });
});

describe('random entities and meta-conditions never throw', () => {
  test('order, select, add, rename and distinct over random JSON', () => {
    const keys = ['A', 'b', 'C'];
    const entity = fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) as fc.Arbitrary<Entity>;
    const locator = fc.constantFrom('A', 'B', 'c', 'A.Length', 'b.0', 'C.x.y');
    const metaText = fc
      .tuple(locator, locator, locator, fc.boolean(), fc.boolean())
      .map(([o, s, a, d, desc]) => `order_${desc ? 'desc' : 'asc'}=${o}&select=${s},C&add=${a}&distinct=${d}`);
    fc.assert(
      fc.property(fc.array(entity, { maxLength: 10 }), metaText, (data, m) => {
        const result = run(data, '_', m);
        expect(result.length).toBeLessThanOrEqual(data.length);
      }),
      { numRuns: 500 },
    );
  });
});
