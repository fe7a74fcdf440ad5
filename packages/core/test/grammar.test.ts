import fc from 'fast-check';
import { ServiceError } from '@resourcery/core';
import { compileQuery, evaluate, META_KEYS, parseUri, toMetaConditions, type Condition, type ParsedUri } from '@resourcery/core/storage';
import { clearParseCache } from '@resourcery/core/internal';
import { caught } from './query-support';

/** The parse of a URI whose conditions and meta-conditions are valid. */
function valid(uri: string): ParsedUri {
  const parsed = parseUri(uri);
  expect(parsed.error).toBeNull();
  return parsed;
}

/** The error a URI's conditions or meta-conditions defer until the resource is resolved. */
function deferred(uri: string): ServiceError {
  const parsed = parseUri(uri);
  if (parsed.error === null) throw new Error(`expected a deferred error for ${uri}`);
  return parsed.error;
}

function conditionsOf(uri: string) {
  return (valid(uri).conditions as Condition[]).map((c) => ({ key: c.locator.text, op: c.op, value: c.value }));
}

function valueOf(literal: string) {
  return (valid(`/R/A=${literal}`).conditions[0] as Condition).value;
}

describe('the resource part: /<resource>[-<view>], $<macro>, every part optional', () => {
  test('a resource alone has no view, conditions or meta-conditions', () => {
    expect(valid('/Person')).toEqual({ resource: 'Person', macro: false, view: null, conditions: [], meta: [], error: null });
  });

  test('a dotted resource name is one name', () => {
    expect(valid('/Shop.Product').resource).toBe('Shop.Product');
  });

  test('-<view> names a view of the resource', () => {
    const parsed = valid('/Person-Adults/Age>30');
    expect([parsed.resource, parsed.view]).toEqual(['Person', 'Adults']);
    expect(parsed.conditions).toHaveLength(1);
  });

  test('an empty view is no view', () => {
    expect(valid('/Person-').view).toBeNull();
  });

  test('$<name> is a macro call, with or without a view', () => {
    expect(valid('/$adults')).toMatchObject({ resource: 'adults', macro: true, view: null });
    expect(valid('/$adults-Short')).toMatchObject({ resource: 'adults', macro: true, view: 'Short' });
  });

  test('a blank resource is the resource listing', () => {
    expect(valid('/').resource).toBe('');
    expect(valid('').resource).toBe('');
  });

  test('the resource name is percent-decoded', () => {
    expect(valid('/Shop%2EProduct').resource).toBe('Shop.Product');
  });

  test('_ or an empty part means none', () => {
    for (const uri of ['/Person/_', '/Person/_/_', '/Person//', '/Person//_', '/Person/_/']) {
      expect(valid(uri)).toMatchObject({ resource: 'Person', conditions: [], meta: [] });
    }
    expect(valid('/Person//limit=1').meta).toEqual([{ key: 'limit', value: '1' }]);
    expect(valid('/Person/_/limit=1').meta).toEqual([{ key: 'limit', value: '1' }]);
  });

  test('a trailing slash is allowed after every part', () => {
    expect(valid('/Person/')).toMatchObject({ resource: 'Person', conditions: [], meta: [] });
    expect(valid('/Person/A=1/').conditions).toHaveLength(1);
    expect(valid('/Person/A=1/limit=2/').meta).toEqual([{ key: 'limit', value: '2' }]);
  });

  test('a fragment or an empty query string is ignored', () => {
    expect(valid('/Person/_/limit=1#top').meta).toEqual([{ key: 'limit', value: '1' }]);
    expect(valid('/Person/A=1?').conditions).toHaveLength(1);
  });

  test('an encoded ? is data, not the start of a query string', () => {
    expect(valueOf('x%3Fy')).toMatchObject({ text: 'x?y' });
  });
});

describe('condition operators: = != < > <= >=, raw or with %3C/%3E/!%3D encodings', () => {
  test('all six raw operators', () => {
    const ops = conditionsOf('/R/A=1&B!=2&C<3&D>4&E<=5&F>=6').map((c) => [c.key, c.op]);
    expect(ops).toEqual([
      ['A', '='],
      ['B', '!='],
      ['C', '<'],
      ['D', '>'],
      ['E', '<='],
      ['F', '>='],
    ]);
  });

  test('%3C and %3E (either case) stand for < and >', () => {
    const ops = conditionsOf('/R/C%3C3&D%3E4&E%3C=5&F%3E=6&G%3c7&H%3e8').map((c) => [c.key, c.op, (c.value as { text: string }).text]);
    expect(ops).toEqual([
      ['C', '<', '3'],
      ['D', '>', '4'],
      ['E', '<=', '5'],
      ['F', '>=', '6'],
      ['G', '<', '7'],
      ['H', '>', '8'],
    ]);
  });

  test('!%3D stands for !=', () => {
    expect(conditionsOf('/R/B!%3D2&C!%3d3').map((c) => c.op)).toEqual(['!=', '!=']);
  });

  test('fully encoded <= and >= (%3C%3D, <%3D) are read as <= and >=', () => {
    const ops = conditionsOf('/R/A%3C%3D1&B%3E%3D2&C<%3D3&D>%3D4').map((c) => [c.key, c.op, (c.value as { text: string }).text]);
    expect(ops).toEqual([
      ['A', '<=', '1'],
      ['B', '>=', '2'],
      ['C', '<=', '3'],
      ['D', '>=', '4'],
    ]);
  });

  test('conditions are joined with & and empty items are skipped', () => {
    expect(conditionsOf('/R/A=1&&B=2&').map((c) => c.key)).toEqual(['A', 'B']);
  });
});

describe('split first, then percent-decode: encoded separators inside keys and values are data', () => {
  test('%26, %2F and %3D inside a value are data', () => {
    expect(valueOf('Tom%20%26%20Jerry')).toMatchObject({ text: 'Tom & Jerry' });
    expect(valueOf('a%2Fb')).toMatchObject({ text: 'a/b' });
    expect(valueOf('a%3Db')).toMatchObject({ text: 'a=b' });
  });

  test('a value that starts with an encoded = is data', () => {
    expect(valueOf('%3DSUM(A1)')).toMatchObject({ text: '=SUM(A1)' });
  });

  test('a key is decoded after the split', () => {
    expect(conditionsOf('/R/Na%6De=1')[0].key).toBe('Name');
    expect(conditionsOf('/R/a%26b=1')[0].key).toBe('a&b');
  });

  test('+ stays +', () => {
    expect(valueOf('a+b')).toMatchObject({ text: 'a+b' });
    expect(valid('/R/_/search=a+b').meta).toEqual([{ key: 'search', value: 'a+b' }]);
  });

  test('meta-condition values are decoded after the split', () => {
    expect(valid('/R/_/search=x%26limit%3D1&limit=2').meta).toEqual([
      { key: 'search', value: 'x&limit=1' },
      { key: 'limit', value: '2' },
    ]);
  });
});

describe('value literals', () => {
  test('null is null; NULL is a plain value (literals are case-sensitive)', () => {
    expect(valueOf('null')).toEqual({ kind: 'null' });
    expect(valueOf('NULL')).toEqual({ kind: 'raw', text: 'NULL' });
  });

  test('empty, \'\' and "" are the empty string', () => {
    expect(valueOf('')).toEqual({ kind: 'string', value: '' });
    expect(valueOf("''")).toEqual({ kind: 'string', value: '' });
    expect(valueOf('%22%22')).toEqual({ kind: 'string', value: '' });
  });

  test('quotes force a string, whatever is inside', () => {
    expect(valueOf("'42'")).toEqual({ kind: 'string', value: '42' });
    expect(valueOf('"true"')).toEqual({ kind: 'string', value: 'true' });
    expect(valueOf("'null'")).toEqual({ kind: 'string', value: 'null' });
    expect(valueOf("'a%20b'")).toEqual({ kind: 'string', value: 'a b' });
  });

  test('an unbalanced quote is part of a plain value', () => {
    expect(valueOf("'abc")).toEqual({ kind: 'raw', text: "'abc" });
    expect(valueOf(`'abc"`)).toEqual({ kind: 'raw', text: `'abc"` });
  });

  test('true and false are booleans; True is a plain value', () => {
    expect(valueOf('true')).toEqual({ kind: 'raw', text: 'true', boolean: true });
    expect(valueOf('false')).toEqual({ kind: 'raw', text: 'false', boolean: false });
    expect(valueOf('True')).toEqual({ kind: 'raw', text: 'True' });
  });

  test.each([
    ['42', 42],
    ['-7', -7],
    ['3.25', 3.25],
    ['-0.5', -0.5],
    ['.5', 0.5],
    ['1e3', 1000],
    ['2.5E-2', 0.025],
    ['-1e+2', -100],
    ['02139', 2139],
  ])('%s is a number (keeping its text)', (text, number) => {
    expect(valueOf(text)).toEqual({ kind: 'raw', text, number });
  });

  test.each([
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['2024-02-29T10:20:30Z', Date.UTC(2024, 1, 29, 10, 20, 30)],
    ['2024-02-29T10:20:30.250Z', Date.UTC(2024, 1, 29, 10, 20, 30, 250)],
    ['2024-02-29T12:20:30%2B02:00', Date.UTC(2024, 1, 29, 10, 20, 30)],
    ['2024-02-29T08:20:30-02:00', Date.UTC(2024, 1, 29, 10, 20, 30)],
  ])('%s is an ISO 8601 date', (text, time) => {
    expect(valueOf(text)).toEqual({ kind: 'raw', text: decodeURIComponent(text), date: time });
  });

  test('text shaped like a date but not a real one is a plain value', () => {
    expect(valueOf('2024-13-45')).toEqual({ kind: 'raw', text: '2024-13-45' });
  });

  test('anything else is a plain value', () => {
    for (const text of ['Alice', '12abc', '1.2.3', '0x10', 'Infinity', 'NaN', '-']) {
      expect(valueOf(text)).toEqual({ kind: 'raw', text });
    }
  });
});

describe('meta-conditions: <name>=<value> pairs, names case-insensitive', () => {
  test('names are lower-cased, values kept as written', () => {
    expect(valid('/R/_/LIMIT=2&Order_Asc=Name&select=Name,Age').meta).toEqual([
      { key: 'limit', value: '2' },
      { key: 'order_asc', value: 'Name' },
      { key: 'select', value: 'Name,Age' },
    ]);
  });

  test('every documented name is accepted', () => {
    const uri = `/R/_/${META_KEYS.map((k) => `${k}=x`).join('&')}`;
    expect(valid(uri).meta.map((m) => m.key)).toEqual([...META_KEYS]);
  });
});

describe('InvalidUriSyntax: malformed percent-encoding or UTF-8, too many parts, no leading slash', () => {
  test('bad percent-encoding in the resource fails at once and names the text', () => {
    const e = caught(() => parseUri('/Per%ZZson'));
    expect([e.code, e.status]).toEqual(['InvalidUriSyntax', 400]);
    expect(e.message).toContain('Per%ZZson');
  });

  test('bad percent-encoding in a condition value is deferred and names the value', () => {
    const e = deferred('/Person/Name=a%2');
    expect(e.code).toBe('InvalidUriSyntax');
    expect(e.message).toContain('a%2');
  });

  test('percent-encoded bytes that are not UTF-8 (%C3%28) are refused', () => {
    const e = deferred('/Person/Name=%C3%28');
    expect(e.code).toBe('InvalidUriSyntax');
    expect(e.message).toContain('%C3%28');
    expect(caught(() => parseUri('/%C3%28')).code).toBe('InvalidUriSyntax');
    expect(deferred('/Person/_/search=%FF').code).toBe('InvalidUriSyntax');
  });

  test('more than three parts fail and name the extra part; the error waits until the resource resolves', () => {
    const parsed = parseUri('/Person/A=1/limit=1/extra');
    expect(parsed.resource).toBe('Person');
    expect(parsed.error?.code).toBe('InvalidUriSyntax');
    expect(parsed.error?.message).toContain('extra');
  });

  test('a URI that does not start with / is refused', () => {
    expect(caught(() => parseUri('Person')).code).toBe('InvalidUriSyntax');
  });
});

describe('InvalidConditionSyntax: an empty locator or an empty locator segment', () => {
  test.each([['=5'], ['%20=5']])('%s has no locator', (item) => {
    const e = deferred(`/Person/${item}`);
    expect([e.code, e.status]).toEqual(['InvalidConditionSyntax', 400]);
    expect(e.message).toContain(decodeURIComponent(item));
  });

  test.each([
    ['a..b=1', 'a..b'],
    ['.a=1', '.a'],
    ['a.=1', 'a.'],
  ])('%s has an empty segment', (item, locator) => {
    const e = deferred(`/Person/${item}`);
    expect(e.code).toBe('InvalidConditionSyntax');
    expect(e.message).toContain(`'${locator}'`);
  });
});

describe('InvalidConditionOperator: an unknown operator or none at all', () => {
  test.each(['Age~3', 'Age', 'Age==3', 'Age<>3', 'Age=>3', 'Age=<3', 'Age!3'])('%s', (item) => {
    const e = deferred(`/Person/${item}`);
    expect([e.code, e.status]).toEqual(['InvalidConditionOperator', 400]);
    expect(e.message).toContain(`'${decodeURIComponent(item)}'`);
  });

  test.each([
    ['Note=%3Cb%3E', '<b>'],
    ['Note!=%3E5', '>5'],
    ['Note=%3D1', '=1'],
  ])('an encoded <, > or = at the start of a value is data: %s', (item, value) => {
    const parsed = parseUri(`/Person/${item}`);
    expect(parsed.error).toBeNull();
    expect((parsed.conditions[0] as Condition).value).toEqual({ kind: 'raw', text: value });
  });
});

describe('InvalidMetaConditionKey: an unknown name, listing the valid ones', () => {
  test('the message names the key and lists every valid name', () => {
    const e = deferred('/Person/_/limit=1&colour=red');
    expect([e.code, e.status]).toEqual(['InvalidMetaConditionKey', 400]);
    expect(e.message).toContain("'colour'");
    for (const key of META_KEYS) expect(e.message).toContain(key);
  });
});

describe('InvalidMetaConditionOperator: a meta-condition needs =', () => {
  test.each(['limit>3', 'limit', 'limit!=3', 'limit%3C3', 'distinct<=true'])('%s', (item) => {
    const e = deferred(`/Person/_/${item}`);
    expect([e.code, e.status]).toEqual(['InvalidMetaConditionOperator', 400]);
    expect(e.message).toContain(`'${decodeURIComponent(item)}'`);
  });
});

describe('InvalidMetaConditionValueType: a value of the wrong type', () => {
  test.each([
    ['limit=abc', 'abc'],
    ['limit=1.5', '1.5'],
    ['limit=-2', '-2'],
    ['offset=x', 'x'],
    ['distinct=maybe', 'maybe'],
    ['unsafe=1', '1'],
    ['select=', ''],
    ['select=Name,,Age', 'Name,,Age'],
    ['order_asc=a..b', 'a..b'],
    ['order_desc=', ''],
    ['rename=Name', 'Name'],
    ['rename=Name->', 'Name->'],
    ['search=', ''],
    ['search_regex=(', '('],
  ])('%s', (item, value) => {
    const parsed = valid(`/Person/_/${item}`);
    const e = caught(() => compileQuery([], toMetaConditions(parsed.meta)));
    expect([e.code, e.status]).toEqual(['InvalidMetaConditionValueType', 400]);
    expect(e.message).toContain(`'${value}'`);
  });
});

describe('errors in conditions and meta-conditions are deferred; the resource part still parses', () => {
  test.each(['/Person/Age~3', '/Person/=1', '/Person/A=%ZZ', '/Person/_/colour=red', '/Person/_/limit>1'])('%s', (uri) => {
    const parsed = parseUri(uri);
    expect(parsed.resource).toBe('Person');
    expect(ServiceError.is(parsed.error)).toBe(true);
  });

  test('a deferred error does not lose the conditions parsed before a bad meta-condition', () => {
    const parsed = parseUri('/Person/A=1/colour=red');
    expect((parsed.conditions as Condition[]).map((c) => c.locator.text)).toEqual(['A']);
    expect(parsed.error!.code).toBe('InvalidMetaConditionKey');
  });
});

describe('the parse cache', () => {
  test('the same URI gives the same object', () => {
    const uri = '/Person/Age>30/limit=5';
    expect(parseUri(uri)).toBe(parseUri(uri));
  });

  test('a cleared cache parses again to an equal result', () => {
    const uri = '/Person/Name=Alice/select=Name';
    const first = parseUri(uri);
    clearParseCache();
    const second = parseUri(uri);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });

  test('a long URI (an IN list of 100 keys) is kept parsed from its second time on, and parses the same either way', () => {
    const inList = (from: number) => `/Person/Id=${Array.from({ length: 100 }, (_, i) => from + i * 7).join('|')}/order_asc=Id`;
    const uri = inList(100_000);
    expect(uri.length).toBeGreaterThan(512);
    clearParseCache();
    const first = parseUri(uri);
    parseUri('/Person/Age>30/limit=5'); // not the last URI parsed, so the cache answers
    const second = parseUri(uri);
    expect(second).not.toBe(first); // seen once: not kept
    expect(second).toEqual(first);
    parseUri('/Person/Age>30/limit=5');
    expect(parseUri(uri)).toBe(second); // seen twice: kept
    // Many long URIs seen once each are not kept, and each still parses as it did.
    const once = Array.from({ length: 300 }, (_, i) => inList(200_000 + i));
    const parsed = once.map((u) => parseUri(u));
    for (let i = 0; i < once.length; i += 37) {
      parseUri('/Person/Age>30/limit=5');
      expect(parseUri(once[i])).not.toBe(parsed[i]);
      expect(parseUri(once[i])).toEqual(parsed[i]);
    }
    expect(parsed[5].conditions).toHaveLength(1);
    expect((parsed[5].conditions[0] as { anyOf: readonly Condition[] }).anyOf.map((c) => c.text)).toEqual(
      Array.from({ length: 100 }, (_, i) => `Id=${200_005 + i * 7}`),
    );
    // Short URIs are kept from their first time, as before.
    const short = '/Person/Name=Alice/select=Name';
    clearParseCache();
    const kept = parseUri(short);
    parseUri(uri);
    expect(parseUri(short)).toBe(kept);
  });
});

describe('no input crashes the parser: it parses or throws a ServiceError', () => {
  const data = [
    { Id: 1, Name: 'a', Age: 1 },
    { Id: 2, Name: 'b', Age: null },
  ];

  /** Parses, compiles and runs a URI; any failure other than a ServiceError escapes. */
  function attempt(uri: string): void {
    try {
      const parsed = parseUri(uri);
      if (parsed.error) return;
      evaluate(data, compileQuery(parsed.conditions, toMetaConditions(parsed.meta)));
    } catch (e) {
      if (!ServiceError.is(e)) throw e;
    }
  }

  test('random strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        attempt(s);
        attempt(`/${s}`);
      }),
      { numRuns: 1000 },
    );
  });

  test('random strings from a URI alphabet', () => {
    const unit = fc.constantFrom(
      ...'/&=!<>%_$-.\'"aZ09,+ '.split(''),
      '%3C',
      '%3E',
      '%3D',
      '%26',
      '%2F',
      '%C3',
      '%28',
      'null',
      'limit',
      'select',
      'rename',
      '->',
      'order_asc',
      'search_regex',
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (s) => {
        attempt(s);
        attempt(`/${s}`);
        attempt(`/R/${s}`);
        attempt(`/R/_/${s}`);
      }),
      { numRuns: 2000 },
    );
  });
});
