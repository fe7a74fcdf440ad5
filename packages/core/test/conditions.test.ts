import fc from 'fast-check';
import { ServiceError, type Entity } from '@resourcery/core';
import { parseUri } from '@resourcery/core/storage';
import { compile, ids, run } from './query-support';

const people: Entity[] = [
  {
    Id: 1,
    Name: 'Alice',
    Age: 34,
    Zip: '02139',
    Member: true,
    Born: '1990-05-01',
    Tags: ['a', 'b'],
    Address: { City: 'Boston', Street: { No: 5 } },
    Nick: null,
  },
  { Id: 2, Name: 'bob', Age: 7, Zip: '10001', Member: false, Born: '2017-01-20T08:00:00Z', Tags: [], Address: { City: 'New York' } },
  { Id: 3, Name: 'Émile', Age: 34.5, Zip: '75001', Member: 'true', Born: 'unknown', Tags: ['x'], Address: null, Nick: 'Em' },
  { Id: 4, Name: 'Zoë', Age: null, Zip: 2139, Born: 19900501, Address: 'Main St', Nick: '' },
];

describe('numbers compare numerically', () => {
  test.each([
    ['Age=34', [1]],
    ['Age<10', [2]],
    ['Age>34', [3]],
    ['Age<=34', [1, 2]],
    ['Age>=34', [1, 3]],
    ['Age>-1', [1, 2, 3]],
    ['Age<3.45e1', [1, 2]],
    ['Age=34.50', [3]],
    ['Age>=3.4E1', [1, 3]],
  ])('%s', (condition, expected) => {
    expect(ids(people, condition)).toEqual(expected);
  });

  test('10 is greater than 9 (not compared as text)', () => {
    expect(
      ids(
        [
          { Id: 1, N: 10 },
          { Id: 2, N: 9 },
        ],
        'N>9',
      ),
    ).toEqual([1]);
  });
});

describe('strings compare by code point, case-sensitively', () => {
  test('= is exact and case-sensitive', () => {
    expect(ids(people, 'Name=Alice')).toEqual([1]);
    expect(ids(people, 'Name=alice')).toEqual([]);
    expect(ids(people, 'Name=Bob')).toEqual([]);
  });

  test('upper case sorts before lower case, and accented letters after z', () => {
    expect(ids(people, 'Name<a')).toEqual([1, 4]);
    expect(ids(people, 'Name>z')).toEqual([3]);
    expect(ids(people, 'Name>=bob')).toEqual([2, 3]);
  });

  test('characters outside the BMP sort after every BMP character', () => {
    const data = [
      { Id: 1, S: '\u{1F600}' },
      { Id: 2, S: '\uFF5E' },
      { Id: 3, S: '\uE000' },
    ];
    expect(ids(data, `S>'${encodeURIComponent('\uFFFF')}'`)).toEqual([1]);
    expect(ids(data, `S<'${encodeURIComponent('\u{10000}')}'`)).toEqual([2, 3]);
  });

  test("a quoted literal forces a string: '34' does not match the number 34", () => {
    const data = [
      { Id: 1, Age: 34 },
      { Id: 2, Age: '34' },
    ];
    expect(ids(data, "Age='34'")).toEqual([2]);
    expect(ids(data, 'Age="34"')).toEqual([2]);
    // An unquoted number meets the string '34' as a mixed pair.
    expect(ids(data, 'Age=34')).toEqual([1]);
    expect(ids(data, 'Age!=34')).toEqual([2]);
  });

  test('an encoded value is compared decoded', () => {
    expect(
      ids(
        [
          { Id: 1, T: 'Tom & Jerry' },
          { Id: 2, T: 'a/b' },
        ],
        'T=Tom%20%26%20Jerry',
      ),
    ).toEqual([1]);
    expect(
      ids(
        [
          { Id: 1, T: 'Tom & Jerry' },
          { Id: 2, T: 'a/b' },
        ],
        'T=a%2Fb',
      ),
    ).toEqual([2]);
  });

  test('agrees with code point order on random strings', () => {
    const codePoints = (s: string) => Array.from(s, (c) => c.codePointAt(0)!);
    const less = (a: string, b: string) => {
      const x = codePoints(a);
      const y = codePoints(b);
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i];
      return x.length < y.length;
    };
    const text = fc.string({
      unit: fc.oneof(
        fc.constantFrom('a', 'B', '\uFF5E', '\uE000', '\u{1F600}', '\u{10000}'),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      ),
      maxLength: 4,
    });
    fc.assert(
      fc.property(text, text, (a, b) => {
        const matches = run([{ S: a }], `S<'${encodeURIComponent(b)}'`).length === 1;
        expect(matches).toBe(less(a, b));
      }),
      { numRuns: 500 },
    );
  });
});

describe('an unquoted number against a string value is a mixed pair', () => {
  test('Zip=02139 matches the number 2139, not the string "02139"; quoted, the string', () => {
    expect(ids(people, 'Zip=02139')).toEqual([4]);
    expect(ids(people, "Zip='02139'")).toEqual([1]);
  });

  test('= false, != true, ordering false: Price>10 never matches "8.00"', () => {
    const data = [
      { Id: 1, Price: '8.00' },
      { Id: 2, Price: 12 },
      { Id: 3, Price: '60' },
    ];
    expect(ids(data, 'Price>10')).toEqual([2]);
    expect(ids(data, 'Price<100')).toEqual([2]);
    expect(ids(data, 'Price=8.00')).toEqual([]);
    expect(ids(data, 'Price!=8.00')).toEqual([1, 2, 3]);
    expect(ids(data, "Price='8.00'")).toEqual([1]);
    expect(ids(people, 'Zip>10000')).toEqual([]);
  });

  test('true matches the boolean true and the string "true"', () => {
    expect(ids(people, 'Member=true')).toEqual([1, 3]);
    expect(ids(people, "Member='true'")).toEqual([3]);
  });
});

describe('booleans', () => {
  test.each([
    ['Member=false', [2]],
    ['Member!=true', [2, 4]],
    ['Member!=false', [1, 3, 4]],
    ['Member>false', [1, 3]],
    ['Member<true', [2]],
  ])('%s', (condition, expected) => {
    expect(ids(people, condition)).toEqual(expected);
  });
});

describe('dates compare by time with ISO string values', () => {
  test('a date literal against ISO date strings', () => {
    expect(ids(people, 'Born<2000-01-01')).toEqual([1]);
    expect(ids(people, 'Born>2000-01-01')).toEqual([2, 3]);
    expect(ids(people, 'Born=1990-05-01')).toEqual([1]);
  });

  test('the same instant in another zone or format is equal', () => {
    expect(ids(people, 'Born=2017-01-20T09:00:00%2B01:00')).toEqual([2]);
    expect(ids(people, 'Born=2017-01-20T08:00:00.000Z')).toEqual([2]);
    expect(ids(people, 'Born>2017-01-20T08:59:59%2B01:00')).toEqual([2, 3]);
  });

  test('a quoted date is a string: compared as text, not by time', () => {
    expect(ids(people, "Born='2017-01-20T09:00:00+01:00'")).toEqual([]);
    expect(ids(people, "Born='2017-01-20T08:00:00Z'")).toEqual([2]);
  });

  test('a string that is not a date compares as text; a number does not compare with a date', () => {
    expect(ids(people, 'Born>1900-01-01')).toEqual([1, 2, 3]);
    expect(ids(people, 'Born!=1900-01-01')).toEqual([1, 2, 3, 4]);
  });
});

describe('=null matches null or missing, !=null the opposite', () => {
  test('=null', () => {
    expect(ids(people, 'Nick=null')).toEqual([1, 2]);
    expect(ids(people, 'Member=null')).toEqual([4]);
  });

  test('!=null', () => {
    expect(ids(people, 'Nick!=null')).toEqual([3, 4]);
  });

  test('ordering against null is always false', () => {
    for (const op of ['<', '>', '<=', '>=']) expect(ids(people, `Nick${op}null`)).toEqual([]);
  });

  test('the empty string is not null', () => {
    expect(ids(people, 'Nick=')).toEqual([4]);
    expect(ids(people, "Nick=''")).toEqual([4]);
    expect(ids(people, 'Nick=""')).toEqual([4]);
  });

  test('the text NULL is a value, not null', () => {
    expect(
      ids(
        [
          { Id: 1, N: 'NULL' },
          { Id: 2, N: null },
        ],
        'N=NULL',
      ),
    ).toEqual([1]);
  });
});

describe('mixed types never throw: = is false, != is true, ordering is false', () => {
  test('a number literal against objects, arrays, booleans, null and missing values', () => {
    const data = [{ Id: 1, V: { a: 1 } }, { Id: 2, V: [1] }, { Id: 3, V: true }, { Id: 4, V: null }, { Id: 5 }];
    expect(ids(data, 'V=1')).toEqual([]);
    expect(ids(data, 'V!=1')).toEqual([1, 2, 3, 4, 5]);
    for (const op of ['<', '>', '<=', '>=']) expect(ids(data, `V${op}1`)).toEqual([]);
  });

  test.each(['Boston', "'x'", 'true', '2020-01-01', '5'])('Address compared with %s', (literal) => {
    const objects = people.filter((p) => typeof p.Address !== 'string').map((p) => p.Id);
    expect(ids(people, `Address=${literal}`)).toEqual([]);
    expect(ids(people, `Address!=${literal}`)).toEqual(expect.arrayContaining(objects));
    for (const op of ['<', '>', '<=', '>=']) expect(ids(people, `Address${op}${literal}`).filter((id) => objects.includes(id))).toEqual([]);
  });
});

describe('property locators: dotted, case-insensitive, with derived .Length', () => {
  test('a dotted locator reaches into nested objects', () => {
    expect(ids(people, 'Address.City=Boston')).toEqual([1]);
    expect(ids(people, 'Address.Street.No>=5')).toEqual([1]);
  });

  test('a missing step makes the value missing', () => {
    expect(ids(people, 'Address.City=null')).toEqual([3, 4]);
    expect(ids(people, 'Address.Street.No=null')).toEqual([2, 3, 4]);
  });

  test('the exact spelling wins over another case, whatever entities came before', () => {
    const mixed: Entity[] = [
      { Id: 1, NAME: 'upper' },
      { Id: 2, Name: 'exact', NAME: 'other' },
      { Id: 3, name: 'lower' },
    ];
    expect(ids(mixed, 'Name=exact')).toEqual([2]);
    expect(ids(mixed, 'Name=other')).toEqual([]);
    expect(ids(mixed, 'NAME=other')).toEqual([2]);
    expect(ids(mixed, 'Name!=null')).toEqual([1, 2, 3]);
    const nested: Entity[] = [
      { Id: 1, A: { B: 1 } },
      { Id: 2, A: { b: 2, B: 3 } },
    ];
    expect(ids(nested, 'A.B=3')).toEqual([2]);
  });

  test('locators are case-insensitive, values are not', () => {
    expect(ids(people, 'address.CITY=Boston')).toEqual([1]);
    expect(ids(people, 'NAME=Alice&aGe=34')).toEqual([1]);
    expect(ids(people, 'address.city=boston')).toEqual([]);
  });

  test('the exact spelling wins over another case', () => {
    expect(ids([{ Id: 1, name: 'low', Name: 'High' }], 'Name=High')).toEqual([1]);
    expect(ids([{ Id: 1, name: 'low', Name: 'High' }], 'name=low')).toEqual([1]);
  });

  test('.Length of strings and arrays', () => {
    expect(ids(people, 'Name.Length=3')).toEqual([2, 4]);
    expect(ids(people, 'name.length>4')).toEqual([1, 3]);
    expect(ids(people, 'Tags.Length=0')).toEqual([2]);
    expect(ids(people, 'Tags.LENGTH>1')).toEqual([1]);
    expect(ids(people, 'Tags.Length=null')).toEqual([4]);
  });

  test('.Length of a number is missing', () => {
    expect(ids(people, 'Age.Length=null')).toEqual([1, 2, 3, 4]);
  });

  test('inherited members such as constructor or __proto__ are not properties', () => {
    expect(ids([{ Id: 1, constructor: 'x' }, { Id: 2 }], 'constructor=null')).toEqual([2]);
    expect(ids([{ Id: 1, toString: 'y' }, { Id: 2 }], 'tostring!=null')).toEqual([1]);
    expect(ids(JSON.parse('[{"Id":1,"__proto__":"p"},{"Id":2}]'), '__proto__=null')).toEqual([2]);
  });

  test('an object property named Length is read as the property', () => {
    expect(ids([{ Id: 1, Box: { Length: 20 } }], 'Box.Length=20')).toEqual([1]);
  });

  test('several conditions must all hold', () => {
    expect(ids(people, 'Age>5&Age<34.5&Name!=null')).toEqual([1, 2]);
  });
});

describe('random entities and conditions never throw', () => {
  const keys = ['Age', 'Name', 'Tags', 'Born', 'Flag'];
  const entity = fc.dictionary(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }) as fc.Arbitrary<Entity>;
  const literal = fc.oneof(
    fc.constantFrom('null', '', "''", 'true', 'false', '0', '-1.5', '1e3', '2020-01-01', '2020-01-01T10:00:00Z', 'abc', "'5'"),
    fc.integer().map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.string({ maxLength: 6 }).map(encodeURIComponent),
  );
  const locator = fc.oneof(fc.constantFrom(...keys), fc.constantFrom('age.length', 'Tags.length', 'Name.x', 'Flag.0', 'missing'));
  const op = fc.constantFrom('=', '!=', '<', '>', '<=', '>=');

  test('every comparison evaluates to true or false', () => {
    fc.assert(
      fc.property(fc.array(entity, { maxLength: 8 }), locator, op, literal, (data, l, o, v) => {
        const parsed = parseUri(`/R/${l}${o}${v}/order_asc=${l}`);
        if (parsed.error) return ServiceError.is(parsed.error);
        const result = run(data, `${l}${o}${v}`, `order_asc=${l}`);
        expect(result.length).toBeLessThanOrEqual(data.length);
        for (const e of result) expect(data).toContain(e);
      }),
      { numRuns: 1000 },
    );
  });

  test('= and != split every set of entities in two', () => {
    fc.assert(
      fc.property(fc.array(entity, { maxLength: 8 }), locator, literal, (data, l, v) => {
        if (parseUri(`/R/${l}=${v}`).error || parseUri(`/R/${l}!=${v}`).error) return;
        const equal = compile(`${l}=${v}`).predicate!;
        const unequal = compile(`${l}!=${v}`).predicate!;
        for (const e of data) expect(unequal(e)).toBe(!equal(e));
      }),
      { numRuns: 1000 },
    );
  });
});
