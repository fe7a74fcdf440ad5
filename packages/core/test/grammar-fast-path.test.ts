import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'peggy';
import { parse } from '../src/grammar/uri-parser.js';

/**
 * The grammar before the fast path for alternatives without an operator (docs/performance.md,
 * "The parse of an IN list"), kept as it was and compiled here: the grammar now must split every
 * URI exactly as it did (keys, operators, values, texts and the offsets that error messages
 * name), since parse.ts reads nothing else.
 */
const before = generate(readFileSync(join(__dirname, 'fixtures', 'uri-before-in-list-fast-path.peggy'), 'utf8'));

function same(uri: string): void {
  expect(parse(uri)).toEqual(before.parse(uri));
}

/** Pieces of condition items: locators, every operator and its encodings, values, separators. */
const piece = fc.constantFrom(
  'Id',
  'Age',
  'Name.First',
  'a',
  'Z',
  '0',
  '42',
  '-3.5',
  '1e3',
  'null',
  'true',
  '2024-01-31',
  "'",
  '"',
  "'a b'",
  '"x|y"',
  ' ',
  '+',
  ',',
  '.',
  '_',
  '$',
  '-',
  '~',
  '^',
  '*',
  'é',
  '🐢',
  '=',
  '!=',
  '<',
  '>',
  '<=',
  '>=',
  '!',
  '==',
  '<>',
  '%3C',
  '%3c',
  '%3E',
  '%3e',
  '%3D',
  '%3d',
  '!%3D',
  '<%3D',
  '%3C%3D',
  '%3E=',
  '%',
  '%3',
  '%3G',
  '%20',
  '%41',
  '%7C',
  '%26',
  '%2F',
  '%C3%A9',
  '%C3%28',
  '%ZZ',
  '|',
  '|',
  '|',
  '&',
  '/',
);

describe('the fast path for alternatives without an operator splits every URI as the grammar did before', () => {
  test('examples of each branch: bare values, operators after a key, encoded operators, `!` alone, empty alternatives', () => {
    for (const uri of [
      '/Person/Id=1|2|3',
      '/Person/Id=1|2|3/order_asc=Id',
      '/Person/Status=open|pending&Age<18|>65',
      '/Person/Name=%41|%42%43|%3Cx|%3ex|a%3C|%3D|%25|%',
      '/Person/Age!3|4',
      '/Person/Age!|!=3|3!',
      '/Person/Id=1||2|',
      '/Person/|',
      '/Person/Id=1|Name=\'a|b\'|"c"',
      '/Person/Id=1|2&&Name=x|y/_',
      '/Person/7',
      '/Person/7,3/comments',
      '/Person/Id%3D1|2',
      '/R/a%3C%3Db|c%3E%3Dd|e!%3Df',
    ])
      same(uri);
  });

  test('random condition parts built from locators, operators, encodings, quotes and separators', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.constantFrom('/R/', '/R-V/', '/', '', '/$m/'), (pieces, prefix) => {
        const conditions = pieces.join('');
        same(`${prefix}${conditions}`);
        same(`/R/${conditions}/limit=5&order_asc=Id`);
      }),
      { numRuns: 5000 },
    );
  });

  test('random IN lists and OR lists: keys, operators and values per alternative', () => {
    const value = fc.array(piece, { maxLength: 4 }).map((p) => p.join('').replace(/[|&/]/g, ''));
    const alternative = fc.tuple(
      fc.constantFrom('', '', 'Id', 'Name.First', '%49d'),
      fc.constantFrom('', '', '=', '!=', '<', '>=', '%3C', '!'),
      value,
    );
    fc.assert(
      fc.property(fc.array(fc.array(alternative, { minLength: 1, maxLength: 8 }), { maxLength: 3 }), (items) => {
        const text = items.map((alts) => alts.map(([k, op, v]) => `${k}${op}${v}`).join('|')).join('&');
        same(`/Person/${text}`);
      }),
      { numRuns: 5000 },
    );
  });

  test('random strings of any characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        same(s);
        same(`/R/${s}`);
      }),
      { numRuns: 500 },
    );
  });
});
