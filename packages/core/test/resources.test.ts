import { createService } from '@resourcery/core';

/** Resource names (DESIGN 2): letters, digits, '_' and '.', case-insensitively unique. */

describe('addResource checks the name', () => {
  test.each(['Person', 'Shop.Product', 'snake_case', '_private', 'Ünïcödé.Ñame', 'V2.Orders', 'a.b.c'])('%s is a valid name', (name) => {
    const service = createService();
    expect(() => service.addResource({ name })).not.toThrow();
  });

  test.each([
    ['', 'empty'],
    ['2Fast', 'starts with a digit'],
    ['.Person', 'starts with a dot'],
    ['Person.', 'ends with a dot'],
    ['Shop/Product', 'holds a slash (it would split the URI)'],
    ['Per son', 'holds a space'],
    ['Person-Summary', 'holds a dash (the view separator)'],
    ['$macro', 'starts with $ (a macro call)'],
    ['a&b', 'holds &'],
    ['a=b', 'holds ='],
  ])('%j is refused: %s', (name) => {
    const service = createService();
    expect(() => service.addResource({ name })).toThrow(/Invalid resource name/);
  });

  test('a name already taken, in any case, is refused', () => {
    const service = createService();
    service.addResource({ name: 'Shop.Product' });
    expect(() => service.addResource({ name: 'shop.PRODUCT' })).toThrow(/already exists/);
  });
});
