import type { Entity } from '@resourcery/core';
import { caught, compile, ids, run } from './query-support';

const people: Entity[] = [
  { Id: 1, Name: 'Ann', Age: 30, Address: { City: 'Oslo', Zip: '0150' } },
  { Id: 2, Name: 'Bo', Age: 25, Address: { City: 'Rome', Zip: '00100' } },
  { Id: 3, Name: 'Cy', Age: 30, Address: { City: 'Oslo', Zip: '0151' }, Note: 'likes Bob' },
  { Id: 4, Name: 'Dee', Age: null, Address: null, Note: 'a,b' },
];

const regex = (pattern: string, settings = '') => `search_regex=${encodeURIComponent(pattern)}${settings}`;

describe('search: Pattern[,PropertyScope,CS|CI], case-insensitive by default', () => {
  test('case-insensitive by default and with CI', () => {
    expect(ids(people, '_', 'search=ANN')).toEqual([1]);
    expect(ids(people, '_', 'search=ann,,CI')).toEqual([1]);
  });

  test('CS is case-sensitive', () => {
    expect(ids(people, '_', 'search=ANN,,CS')).toEqual([]);
    expect(ids(people, '_', 'search=Ann,,CS')).toEqual([1]);
    expect(ids(people, '_', 'search=bo,,cs')).toEqual([]);
  });

  test('without a scope the whole entity is searched, nested values included', () => {
    expect(ids(people, '_', 'search=oslo')).toEqual([1, 3]);
    expect(ids(people, '_', 'search=bo')).toEqual([2, 3]);
  });

  test('a scope searches only that property, dotted scopes included', () => {
    expect(ids(people, '_', 'search=bo,Name')).toEqual([2]);
    expect(ids(people, '_', 'search=015,address.zip')).toEqual([1, 3]);
    expect(ids(people, '_', 'search=BO,Name,CS')).toEqual([]);
  });

  test('a scoped number or null is searched in its JSON form', () => {
    expect(ids(people, '_', 'search=30,Age')).toEqual([1, 3]);
    expect(ids(people, '_', 'search=null,Age')).toEqual([]);
  });

  test('an encoded pattern is decoded; a comma before a scope belongs to the pattern', () => {
    expect(ids(people, '_', 'search=likes%20bob')).toEqual([3]);
    expect(ids(people, '_', 'search=a,b,Note')).toEqual([4]);
  });
});

describe('search_regex: a URI-encoded JavaScript regular expression with the same settings', () => {
  test('case-insensitive by default, CS and CI', () => {
    expect(ids(people, '_', regex('^a', ',Name'))).toEqual([1]);
    expect(ids(people, '_', regex('^a', ',Name,CS'))).toEqual([]);
    expect(ids(people, '_', regex('^A', ',Name,CS'))).toEqual([1]);
    expect(ids(people, '_', regex('^a', ',Name,CI'))).toEqual([1]);
  });

  test('case-insensitive matching keeps escapes as written: \\D, \\W and \\S still mean what they say', () => {
    const words: Entity[] = [
      { Id: 1, T: 'ABC-123' },
      { Id: 2, T: 'abc 123' },
      { Id: 3, T: 'ABC' },
    ];
    expect(ids(words, '_', regex('^[A-Z]+\\W\\d+$', ',T'))).toEqual([1, 2]);
    expect(ids(words, '_', regex('^\\D+$', ',T'))).toEqual([3]);
    expect(ids(words, '_', regex('^\\S+$', ',T'))).toEqual([1, 3]);
    expect(ids(words, '_', regex('^\\x41\\u0042C', ',T'))).toEqual([1, 2, 3]);
    expect(ids(words, '_', regex('^\\x41\\u0042C', ',T,CS'))).toEqual([1, 3]);
  });

  test('encoded alternation, anchors and quantifiers', () => {
    expect(ids(people, '_', regex('^(Bo|Dee)$', ',Name'))).toEqual([2, 4]);
    expect(ids(people, '_', regex('\\d{5}'))).toEqual([2]);
    expect(ids(people, '_', regex('^0\\d{2,3}$', ',Address.Zip'))).toEqual([1, 3]);
  });

  test("without a scope the entity's JSON text is matched", () => {
    expect(ids(people, '_', regex('"Age":30'))).toEqual([1, 3]);
  });

  test('search and search_regex both apply', () => {
    expect(ids(people, '_', `search=oslo&${regex('y$', ',Name')}`)).toEqual([3]);
  });

  test('an invalid regular expression is a 400 InvalidMetaConditionValueType', () => {
    for (const pattern of ['(', '[a-', '*a', 'a{2,1}']) {
      const e = caught(() => compile('_', regex(pattern)));
      expect([e.code, e.status]).toEqual(['InvalidMetaConditionValueType', 400]);
    }
  });
});

describe('regular expressions run in linear time: what RE2 cannot run is refused before it runs', () => {
  test.each(['(a)\\1', '(?<x>a)\\k<x>', '(?=a)b', '(?<!a)b'])('%s is a 400 InvalidMetaConditionValueType', (pattern) => {
    const e = caught(() => compile('_', regex(pattern)));
    expect([e.code, e.status]).toEqual(['InvalidMetaConditionValueType', 400]);
  });

  // Shapes a backtracking engine takes exponential time on: RE2 answers them at once, so they are accepted.
  test.each([
    ['(a+)+$', false],
    ['(a|a)*$', true],
    ['(.*)*b', false],
    ['(a*)*b', false],
    ['(\\w+\\s?)+$', false],
    ['(a|aa)+$', false],
    ['(?:x|xy)+$', false],
    ['(a|a){30}$', false],
    ['((a|b)c?)*$', true],
  ])('%s runs (it would backtrack catastrophically on a backtracking engine)', (pattern, matches) => {
    const attack: Entity[] = [{ Id: 1, Text: `${'a'.repeat(40)}!` }];
    expect(run(attack, '_', `${regex(pattern, ',Text,CS')}&select=Id`)).toEqual(matches ? [{ Id: 1 }] : []);
  });

  test.each([
    '(ab)+',
    'a{1,3}',
    '[(|)]+',
    '\\(a|b\\)+',
    '(a|b)',
    'x(a|b)?y',
    '^[a-z]+\\d*$',
    '\\w+\\s+\\w+',
    '^a.*z$',
    '\\d+-\\d+',
    '.*x',
    'a.*b.*c',
  ])('%s is accepted', (pattern) => {
    expect(() => compile('_', regex(pattern))).not.toThrow();
  });

  // Patterns with polynomial backtracking run on V8's linear-time engine instead of being refused.
  test.each([
    ['.*.*x', false],
    ['.*.*.*x', false],
    ['\\w+\\w+x', false],
    ['a*a*b', true],
    ['.*?.*?x', false],
    ['[^,]*.*x', false],
    ['\\d+\\w+x', false],
    ['(?:\\d+)(?:\\d+)x', false],
  ])('%s runs and answers correctly on a long adversarial value', (pattern, matches) => {
    const long: Entity[] = [{ Id: 1, Text: `${'a1'.repeat(20000)}b` }];
    expect(run(long, '_', `${regex(pattern, ',Text,CS')}&select=Id`)).toEqual(matches ? [{ Id: 1 }] : []);
  });
});
