import fc from 'fast-check';
import type { Entity } from '@resourcery/core';
import { compileSearch } from '../src/query/search';
import { ScanMeter } from '../src/query/scan';

// search without a scope looks for the pattern in the entity's JSON text. It tests the
// text's tokens one by one instead of making the text (query/json-text-search.ts): the
// answer must be that of the definition for every entity and pattern.

const TEXTS = [
  'Ann',
  'aNN',
  'ΟΔΟΣ',
  'Σa',
  'İstanbul',
  'x"y',
  'a\\b',
  'a\nb',
  'tab\there',
  '\u{1F600}',
  '\ud800',
  'ß',
  '',
  'null',
  'True',
  '1e+21',
  'a:b',
  '{x}',
  'K\u212A',
  // Escapes followed by the string's own characters: a needle may start inside the escape.
  '\u0019999@x',
  'a\u001fbcd',
  '\ud8999z',
  'x\u000b1',
  '\tabc',
  // Upper-case and non-ASCII letters around digits and punctuation: a needle without letters is not lower-cased against them.
  'ADA.99-1@X.ORG',
  '\u0130-1.\u212A',
  'Σ_9 σ-9',
];
const scalar = fc.oneof(
  fc.constantFrom(...TEXTS),
  fc.string({ maxLength: 6 }),
  fc.constantFrom(0, -0, 1, 42, -7.5, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);
const value = fc.oneof(
  { weight: 5, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('City', 'zip', 'A"b'), scalar, { maxKeys: 2 }) },
  { weight: 1, arbitrary: fc.constant(new Date('2020-01-02T03:04:05Z')) },
);
const name = fc.oneof(fc.constantFrom('Name', 'name', 'Age', 'Ölçü', 'a"b', 'new\nline', '__proto__', 'true'), fc.string({ maxLength: 4 }));
const entity = fc.array(fc.tuple(name, value), { maxLength: 5 }).map((pairs) => {
  const e: Entity = {};
  for (const [k, v] of pairs) Object.defineProperty(e, k, { value: v, enumerable: true, writable: true, configurable: true });
  return e;
});

/** Needles: fixed fragments, random text, and pieces of the entity's own JSON text. */
const needle = (e: Entity) =>
  fc.oneof(
    fc.constantFrom(
      'ann',
      'ΟΔΟς',
      'οδος',
      'σa',
      'i̇stanbul',
      'istanbul',
      'nb',
      'n',
      'tt',
      'nu',
      'ull',
      'true',
      'rue',
      'fals',
      '1e',
      'e+2',
      '-0',
      '42',
      '7.5',
      '2020-01',
      'city',
      'ß',
      'ss',
      'k',
      'u',
      '\ud800',
      'ame',
      'x',
      '"',
      ':',
      '99@',
      '999@x',
      '0019999',
      '1fbcd',
      'fbc',
      'd8999z',
      '999z',
      '00b1',
      'b1',
      'tabc',
      'u00',
    ),
    fc.string({ minLength: 1, maxLength: 3 }),
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 6 })).map(([at, n]) => {
      const text = JSON.stringify(e);
      const start = at % text.length;
      return text.slice(start, start + n) || 'a';
    }),
  );

test('a search over the whole entity answers what its JSON text answers', () => {
  fc.assert(
    fc.property(
      entity.chain((e) => fc.tuple(fc.constant(e), needle(e), fc.boolean())),
      ([e, pattern, cs]) => {
        const search = compileSearch(`${pattern},,${cs ? 'CS' : 'CI'}`);
        const text = JSON.stringify(e);
        const expected = cs ? text.includes(pattern) : text.toLowerCase().includes(pattern.toLowerCase());
        expect(search(e, new ScanMeter(1e9))).toBe(expected);
      },
    ),
    { numRuns: 10_000 },
  );
});

test('a needle of digits and punctuation answers what the lower-cased JSON text answers', () => {
  const plain = fc
    .array(fc.constantFrom('0', '1', '9', '@', '.', '-', '_', ' ', '+'), { minLength: 1, maxLength: 4 })
    .map((chars) => chars.join(''));
  fc.assert(
    fc.property(
      entity.chain((e) =>
        fc.tuple(
          fc.constant(e),
          fc.oneof(
            plain,
            needle(e).filter((n) => !/[a-z\u0080-\uffff]/i.test(n)),
          ),
        ),
      ),
      ([e, pattern]) => {
        const search = compileSearch(`${pattern},,CI`);
        expect(search(e, new ScanMeter(1e9))).toBe(JSON.stringify(e).toLowerCase().includes(pattern));
      },
    ),
    { numRuns: 5_000 },
  );
});

test('a needle of letters answers what the lower-cased JSON text answers, upper case and Unicode around it', () => {
  // Strings without the needle's rarest letter in either case are passed over uncopied:
  // only U+0130 and the Kelvin sign lower-case to ASCII letters (i, k), which are never the letter tested.
  const piece = fc.constantFrom(
    'w',
    'W',
    'z',
    'Z',
    'q',
    'ik',
    'IK',
    '\u212A',
    '\u0130',
    'i\u0307',
    'Σ',
    'ς',
    '\n',
    'nowhere',
    'NoWhErE',
    'e',
    ' ',
  );
  const text = fc.array(piece, { maxLength: 6 }).map((p) => p.join(''));
  const word = fc
    .array(fc.constantFrom('w', 'z', 'q', 'i', 'k', 'e', 'n', 'o', 'h', 'r', 'ß', 'σ', '\u0307'), { minLength: 1, maxLength: 4 })
    .map((p) => p.join(''));
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom('Name', 'WHERE', 'kin', 'q'), text, { maxKeys: 3 }), word, fc.boolean(), (e, pattern, cs) => {
      const search = compileSearch(`${pattern},,${cs ? 'CS' : 'CI'}`);
      const json = JSON.stringify(e);
      const expected = cs ? json.includes(pattern) : json.toLowerCase().includes(pattern.toLowerCase());
      expect(search(e, new ScanMeter(1e9))).toBe(expected);
    }),
    { numRuns: 5_000 },
  );
});

test('a sigma after an escape is lower-cased as in the JSON text', () => {
  // `"\\nΣ"` in the text: the escape's n is a letter before the sigma, so it lower-cases to ς there.
  const e = { Name: '\nΣ' };
  expect(JSON.stringify(e).toLowerCase()).toContain('ς');
  expect(compileSearch('σ')(e, new ScanMeter(1e9))).toBe(false);
  expect(compileSearch('ς')(e, new ScanMeter(1e9))).toBe(true);
  expect(compileSearch('nς')(e, new ScanMeter(1e9))).toBe(true);
  expect(compileSearch('σ')({ Name: 'Σ\n' }, new ScanMeter(1e9))).toBe(true);
});

test('the meter counts what a search reads, so the budget still stops a large search', () => {
  const search = compileSearch('zzz');
  const meter = new ScanMeter(1e9);
  search({ Text: 'a'.repeat(1000), Nested: { more: 'b'.repeat(500) } }, meter);
  expect(meter.scanned).toBeGreaterThanOrEqual(1500);
});
