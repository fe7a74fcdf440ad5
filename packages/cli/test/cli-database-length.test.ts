import { EVERY, storages } from './storages-support';

/**
 * `.Length` of a string counts Unicode code points, as PostgreSQL's length() does: the
 * memory, CLI file and SQL storages agree (docs/uri.md, "Locators").
 */

const DATA = {
  pets: [
    { id: 1, Name: 'Turbo 🐢' }, // 7: the turtle is one code point (two UTF-16 units)
    { id: 2, Name: 'Rene\u0301' }, // 5: e + a combining acute accent
    { id: 3, Name: '👩‍👩‍👧' }, // 5: three emoji joined by two ZWJ
    { id: 4, Name: 'Rex' }, // 3
    { id: 5, Name: '𝄞𝄞' }, // 2
  ],
};

const on = storages();

describe.each(EVERY)('.Length counts code points (%s storage, %s)', (kind, transport) => {
  test('in conditions, in any spelling of the locator, and in order', async () => {
    const { call } = await on.serve(kind, transport, DATA);
    const ids = async (uri: string) => {
      const r = await call('GET', uri);
      return r.status === 204 ? [] : (r.json as Array<{ id: number }>).map((e) => e.id);
    };
    expect(await ids('/pets/Name.Length=7/select=id')).toEqual([1]);
    expect(await ids('/pets/name.length=5/order_asc=id&select=id')).toEqual([2, 3]);
    expect(await ids('/pets/Name.Length<=3/order_asc=id&select=id')).toEqual([4, 5]);
    expect(await ids('/pets/Name.Length>7/select=id')).toEqual([]);
    expect(await ids('/pets/_/order_asc=Name.Length&select=id')).toEqual([5, 4, 2, 3, 1]);
  });
});
