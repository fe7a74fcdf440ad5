import { EVERY, storages } from './storages-support';

/**
 * `add` outputs each derived value under one name per resource: the entity gets the same
 * key in every result, whatever the other entities of the result hold (docs/uri.md,
 * "Output names"), on the memory, CLI file and SQL storages alike.
 */

const DATA = {
  pets: [
    { id: 1, Name: 'Rex', Notes: null },
    { id: 2, Name: 'Tom', Notes: 'shy' },
    { id: 3, name: 'Kit', notes: 'bites' },
    { id: 4, NAME: 'Bo' },
  ],
};

const on = storages();

describe.each(EVERY)('add names (%s storage, %s)', (kind, transport) => {
  test('an entity gets the same added key alone, among others, in any order', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    const keys = async (uri: string) => {
      const r = await call('GET', uri);
      expect(r.status).toBe(200);
      return Object.fromEntries(
        (r.json as Array<Record<string, unknown>>).map((e) => [e.id, Object.keys(e).filter((k) => k.includes('.'))]),
      );
    };
    // Rex's Notes is null: no length of its own, yet the name is the resource's (Tom's spelling).
    expect(await keys('/pets/id=1/add=notes.length')).toEqual({ 1: ['Notes.Length'] });
    expect(await keys('/pets/id=4/add=notes.length')).toEqual({ 4: ['Notes.Length'] });
    // Kit spells it notes: the output name is still the resource's.
    expect(await keys('/pets/id=3/add=NOTES.LENGTH')).toEqual({ 3: ['Notes.Length'] });
    const all = { 1: ['Notes.Length'], 2: ['Notes.Length'], 3: ['Notes.Length'], 4: ['Notes.Length'] };
    expect(await keys('/pets/_/add=notes.length')).toEqual(all);
    expect(await keys('/pets/_/order_desc=id&add=notes.length')).toEqual(all);
    // The first entity that has Name spells it so; Bo's NAME is named after it too.
    expect(await keys('/pets/id=4/add=name.length')).toEqual({ 4: ['Name.Length'] });
    // No entity has it: the caller's spelling.
    expect(await keys('/pets/_/add=color.length')).toEqual({
      1: ['color.length'],
      2: ['color.length'],
      3: ['color.length'],
      4: ['color.length'],
    });
  });

  test('the values are each entity’s own; select and order see the added name', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    const r = await call('GET', '/pets/_/add=notes.length&select=id&order_asc=notes.length');
    expect(r.json).toEqual([
      { id: 1, 'Notes.Length': null },
      { id: 4, 'Notes.Length': null },
      { id: 2, 'Notes.Length': 3 },
      { id: 3, 'Notes.Length': 5 },
    ]);
  });
});
