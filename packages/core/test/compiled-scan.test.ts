import fc from 'fast-check';
import { type Entity } from '@resourcery/core';
import { evaluate } from '@resourcery/core/storage';
import { codeGenerationActive, generatedScans, setCodeGeneration } from '@resourcery/core/internal';
import { compile } from './query-support';

// Generated scans (query/compiled-scan.ts) must answer exactly what the closure plan answers.

const KEYS = ['Age', 'age', 'AGE', 'Name', 'name', 'City', 'Address', 'address', 'Tags', 'When', 'Flag', 'toString'];
const scalar = fc.oneof(
  fc.integer({ min: -3, max: 40 }),
  fc.constantFrom(0.5, -0, Number.NaN, 1e21),
  fc.constantFrom('a', 'B', 'abc', '30', '02139', '', 'zz', '2020-01-01', '2021-06-30T12:00:00Z', '\u{1F600}', '\uFF5E'),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.record({ City: scalar, Zip: scalar }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.record({ city: scalar }) },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(new Date('2020-01-01T00:00:00Z'), new Date('2022-03-01T00:00:00Z')) },
);
// One spelling of a name per entity: with two spellings and neither the locator's, which one
// a case-insensitive read finds is not defined (either path may answer either).
const entity = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 }).map((e) => {
  const seen = new Set<string>();
  return Object.fromEntries(Object.entries(e).filter(([k]) => !seen.has(k.toLowerCase()) && seen.add(k.toLowerCase()))) as Entity;
});
const data = fc.array(entity, { maxLength: 40 });

const LOCATORS = [
  'Age',
  'age',
  'aGE',
  'Name',
  'City',
  'Address.City',
  'address.city',
  'Address.Zip',
  'Name.Length',
  'Tags.Length',
  'Tags.0',
  'When',
  'Flag',
  'Missing',
  'toString',
  'constructor',
];
const LITERALS = [
  '30',
  '0',
  '-1',
  '0.5',
  "'abc'",
  "'30'",
  '"B"',
  'abc',
  'B',
  '02139',
  'null',
  'true',
  'false',
  '2020-01-01',
  '2021-06-30T12:00:00Z',
  "''",
];
const OPS = ['=', '!=', '<', '>', '<=', '>='];
const condition = fc
  .tuple(fc.constantFrom(...LOCATORS), fc.constantFrom(...OPS), fc.constantFrom(...LITERALS))
  .map(([l, o, v]) => `${l}${o}${v}`);
const meta = fc
  .record({
    // One key, or several (one list, or both directions mixed): the generated top-k scan
    // compares key by key as selectRange does.
    order: fc.option(
      fc.oneof(
        fc.tuple(fc.constantFrom('order_asc', 'order_desc'), fc.constantFrom(...LOCATORS)).map(([o, l]) => `${o}=${l}`),
        fc
          .tuple(fc.constantFrom('order_asc', 'order_desc'), fc.array(fc.constantFrom(...LOCATORS), { minLength: 2, maxLength: 3 }))
          .map(([o, ls]) => `${o}=${ls.join(',')}`),
        fc
          .tuple(fc.constantFrom(...LOCATORS), fc.constantFrom(...LOCATORS), fc.boolean())
          .map(([a, b, descFirst]) => (descFirst ? `order_desc=${a}&order_asc=${b}` : `order_asc=${a}&order_desc=${b}`)),
      ),
      { nil: undefined },
    ),
    offset: fc.option(
      fc.integer({ min: -5, max: 5 }).map((n) => `offset=${n}`),
      { nil: undefined },
    ),
    limit: fc.option(
      fc.integer({ min: -1, max: 6 }).map((n) => `limit=${n}`),
      { nil: undefined },
    ),
    select: fc.option(fc.constantFrom('select=Name,Age', 'select=Address.City', 'distinct=true&select=City'), { nil: undefined }),
    search: fc.option(fc.constantFrom('search=a', 'search=30'), { nil: undefined }),
  })
  .map(
    (m) =>
      Object.values(m)
        .filter((x) => x !== undefined)
        .join('&') || '_',
  );
const query = fc.tuple(
  fc.array(condition, { maxLength: 3 }).map((cs) => cs.join('&') || '_'),
  meta,
);

afterEach(() => setCodeGeneration(true));

test('this runtime allows code generation', () => {
  expect(codeGenerationActive()).toBe(true);
});

test('generated scans answer what the closure plan answers, over random data and queries', () => {
  const before = generatedScans();
  fc.assert(
    fc.property(data, query, (entities, [conditions, metaText]) => {
      // Each query runs four times on both paths (projection names learn from earlier calls);
      // the scan is generated after a few calls of one query, so the later calls run it.
      setCodeGeneration(false);
      const closures = compile(conditions, metaText);
      const expected = [0, 1, 2, 3].map(() => evaluate(entities, closures));
      setCodeGeneration(true);
      const q = compile(conditions, metaText);
      for (let i = 0; i < 4; i++) expect(evaluate(entities, q)).toEqual(expected[i]);
    }),
    { numRuns: 600 },
  );
  expect(generatedScans()).toBeGreaterThan(before);
});

test('queries of one shape share a generated scan; their literals stay their own', () => {
  const entities = [{ Rank: 20 }, { Rank: 35 }, { rank: 50 }, { Rank: '40' }];
  const young = compile('Rank<30');
  const old = compile('Rank>30', 'order_desc=Rank&limit=2');
  for (let i = 0; i < 3; i++) evaluate(entities, young);
  const count = generatedScans();
  expect(evaluate(entities, young)).toEqual([{ Rank: 20 }]);
  expect(evaluate(entities, compile('Rank<45'))).toEqual([{ Rank: 20 }, { Rank: 35 }]);
  for (let i = 0; i < 3; i++) expect(evaluate(entities, old)).toEqual([{ rank: 50 }, { Rank: 35 }]);
  // `Rank<45` reused the `Rank<30` scan; the ordered query is a new shape. `Rank` is a name
  // the property tests above never generate, so no earlier query can have made this shape.
  expect(generatedScans()).toBe(count + 1);
});

test('with code generation off, nothing is generated', () => {
  setCodeGeneration(false);
  const before = generatedScans();
  const q = compile('Name=x&Age>1');
  for (let i = 0; i < 5; i++)
    expect(
      evaluate(
        [
          { Name: 'x', Age: 2 },
          { Name: 'y', Age: 3 },
        ],
        q,
      ),
    ).toEqual([{ Name: 'x', Age: 2 }]);
  expect(generatedScans()).toBe(before);
});

test('where the runtime refuses code generation (CSP), it is detected and queries still answer', () => {
  jest.isolateModules(() => {
    const real = globalThis.Function;
    globalThis.Function = function refused() {
      throw new EvalError('Code generation from strings disallowed for this context');
    } as unknown as FunctionConstructor;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const scan = require('../src/query/compiled-scan') as typeof import('../src/query/compiled-scan');
      expect(scan.codeGenerationActive()).toBe(false);
    } finally {
      globalThis.Function = real;
    }
  });
});
