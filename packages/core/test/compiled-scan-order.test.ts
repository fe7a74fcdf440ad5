import fc from 'fast-check';
import { type Entity } from '@resourcery/core';
import { evaluate } from '@resourcery/core/storage';
import { generatedScans, setCodeGeneration } from '@resourcery/core/internal';
import { compile } from './query-support';

// The generated scan for several order keys (query/compiled-scan.ts, severalKeys) keeps the
// page while scanning and holds the items that tie on the first key before comparing them in
// full. Its pages must be those of a plain stable sort of every match, written out here
// without the library: null, missing and NaN < booleans < numbers < strings (by code point)
// < anything else (all equal), each key in its own direction, ties by position.

function rank(v: unknown): number {
  if (v === undefined || v === null || (typeof v === 'number' && Number.isNaN(v))) return 0;
  if (typeof v === 'boolean') return 1;
  if (typeof v === 'number') return 2;
  if (typeof v === 'string') return 3;
  return 4;
}

function codePoints(s: string): number[] {
  return Array.from(s, (c) => c.codePointAt(0)!);
}

function compare(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0 || ra === 4) return 0;
  if (ra === 3) {
    const x = codePoints(a as string);
    const y = codePoints(b as string);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  }
  const [x, y] = [a as number, b as number];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The page a plain stable sort gives. */
function sorted(entities: Entity[], keys: { name: string; down: boolean }[], below: number, offset: number, limit: number): unknown[] {
  const all = entities.filter((e) => (e.Id as number) < below);
  all.sort((a, b) => {
    for (const { name, down } of keys) {
      const c = compare(a[name], b[name]);
      if (c !== 0) return down ? -c : c;
    }
    return 0;
  });
  return all.slice(offset, offset + limit).map((e) => e.Id);
}

// Few values per key, so that many items tie on the first key (more than the 32 held at once).
const value = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 3 }) },
  { weight: 4, arbitrary: fc.constantFrom('a', 'B', 'ab', 'b', 'Ab', '', '\u{1F600}', '\uFF5E', 'a\u{1F600}', 'a\uFF5E') },
  { weight: 2, arbitrary: fc.constantFrom(null, undefined, Number.NaN, true, false, 0.5, -0) },
  { weight: 1, arbitrary: fc.constantFrom([1], { x: 1 }) },
);
const data = fc.array(fc.tuple(value, value, value), { maxLength: 400 }).map((rows) =>
  rows.map(([a, b, c], Id) => {
    const e: Entity = { Id };
    // undefined: the property is missing.
    for (const [name, v] of [
      ['A', a],
      ['B', b],
      ['C', c],
    ] as const)
      if (v !== undefined) e[name] = v;
    return e;
  }),
);
const name = fc.constantFrom('A', 'B', 'C');
// One list in one direction, or one in each (`order_asc=A&order_desc=B,C`: the first written
// is the primary order; a direction given twice would keep only its last list, docs/uri.md).
const order = fc
  .tuple(fc.boolean(), fc.array(name, { minLength: 1, maxLength: 3 }), fc.array(name, { maxLength: 2 }))
  .filter(([, first, second]) => first.length + second.length >= 2)
  .map(([down, first, second]) => ({
    text: [first, second]
      .map((list, i) => (list.length === 0 ? '' : `${(i === 0) === down ? 'order_desc' : 'order_asc'}=${list.join(',')}`))
      .filter((x) => x !== '')
      .join('&'),
    keys: [...first.map((n) => ({ name: n, down })), ...second.map((n) => ({ name: n, down: !down }))],
  }));

afterEach(() => setCodeGeneration(true));

test('pages of several order keys from the generated scan are those of a plain stable sort', () => {
  const before = generatedScans();
  fc.assert(
    fc.property(
      data,
      order,
      fc.integer({ min: 0, max: 80 }),
      fc.integer({ min: 1, max: 80 }),
      fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
      (entities, { text, keys }, offset, limit, below) => {
        const q = compile(below === undefined ? '_' : `Id<${below}`, `${text}&offset=${offset}&limit=${limit}`);
        const expected = sorted(entities, keys, below ?? Infinity, offset, limit);
        // The scan is generated after a few calls of one query: the later calls run it.
        for (let i = 0; i < 4; i++) expect(evaluate(entities, q).map((e) => e.Id)).toEqual(expected);
      },
    ),
    { numRuns: 400 },
  );
  expect(generatedScans()).toBeGreaterThan(before);
});

test('with code generation off, the same pages', () => {
  setCodeGeneration(false);
  fc.assert(
    fc.property(
      data,
      order,
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 1, max: 40 }),
      (entities, { text, keys }, offset, limit) => {
        const q = compile('_', `${text}&offset=${offset}&limit=${limit}`);
        for (let i = 0; i < 3; i++) expect(evaluate(entities, q).map((e) => e.Id)).toEqual(sorted(entities, keys, Infinity, offset, limit));
      },
    ),
    { numRuns: 100 },
  );
});

test('a long run of ties on the first key settles in order, over many pending lists', () => {
  // 2,000 entities, `A` 0 or 1, `B` a string: hundreds tie with the page's last on `A`.
  const spread: Entity[] = Array.from({ length: 2000 }, (_, Id) => ({ Id, A: (Id * 7919) % 2, B: `n${(Id * 104729) % 97}` }));
  // Every entity ties on `A`; each block of ten shares `B`, and each block beats all the
  // blocks before it, so whole runs of equal entities enter the page from one pending list.
  const blocks: Entity[] = Array.from({ length: 2000 }, (_, Id) => ({ Id, A: 0, B: 100 - Math.floor(Id / 10) }));
  const desc: Entity[] = blocks.map((e) => ({ ...e, B: -(e.B as number) }));
  for (const [entities, meta, keys] of [
    [
      spread,
      'order_asc=A,B&limit=50',
      [
        { name: 'A', down: false },
        { name: 'B', down: false },
      ],
    ],
    [
      spread,
      'order_asc=A&order_desc=B&offset=30&limit=70',
      [
        { name: 'A', down: false },
        { name: 'B', down: true },
      ],
    ],
    [
      spread,
      'order_desc=A,B&limit=1',
      [
        { name: 'A', down: true },
        { name: 'B', down: true },
      ],
    ],
    [
      blocks,
      'order_asc=A,B&limit=50',
      [
        { name: 'A', down: false },
        { name: 'B', down: false },
      ],
    ],
    [
      blocks,
      'order_desc=A&order_asc=B&offset=5&limit=13',
      [
        { name: 'A', down: true },
        { name: 'B', down: false },
      ],
    ],
    [
      desc,
      'order_desc=A,B&limit=40',
      [
        { name: 'A', down: true },
        { name: 'B', down: true },
      ],
    ],
  ] as const) {
    const q = compile('_', meta);
    const offset = Number(/offset=(\d+)/.exec(meta)?.[1] ?? 0);
    const limit = Number(/limit=(\d+)/.exec(meta)![1]);
    for (let i = 0; i < 4; i++)
      expect(evaluate(entities, q).map((e) => e.Id)).toEqual(sorted(entities, [...keys], Infinity, offset, limit));
  }
});

test('an item that ties on the first key is passed over on its first character only where that character decides', () => {
  // A full page whose last item's second key starts with one character, then items that tie
  // on the first key and start with another: U+FF5E sorts before U+1F600 (code points), though
  // its UTF-16 unit is the larger; a value that is no string, or an empty string, is never
  // passed over on a character.
  const page = (b: unknown, from: number): Entity[] => Array.from({ length: 60 }, (_, i) => ({ Id: from + i, A: 0, B: b }));
  const cases: [Entity[], string, { name: string; down: boolean }[]][] = [
    [
      [...page('\u{1F600}x', 0), ...page('\uFF5E', 60)],
      'order_asc=A,B&limit=50',
      [
        { name: 'A', down: false },
        { name: 'B', down: false },
      ],
    ],
    [
      [...page('\uFF5E', 0), ...page('\u{1F600}x', 60)],
      'order_asc=A&order_desc=B&limit=50',
      [
        { name: 'A', down: false },
        { name: 'B', down: true },
      ],
    ],
    [
      [...page('b', 0), ...page(5, 60), ...page('', 120)],
      'order_asc=A,B&limit=50',
      [
        { name: 'A', down: false },
        { name: 'B', down: false },
      ],
    ],
    [
      [...page('b', 0), ...page({ x: 1 }, 60)],
      'order_desc=A,B&limit=50',
      [
        { name: 'A', down: true },
        { name: 'B', down: true },
      ],
    ],
    [
      [...page('b', 0), ...page('a', 60), ...page('c', 120)],
      'order_asc=A,B&limit=50',
      [
        { name: 'A', down: false },
        { name: 'B', down: false },
      ],
    ],
    [
      [...page('b', 0), ...page('a', 60), ...page('c', 120)],
      'order_desc=A,B&limit=50',
      [
        { name: 'A', down: true },
        { name: 'B', down: true },
      ],
    ],
  ];
  for (const [entities, meta, keys] of cases) {
    const q = compile('_', meta);
    const expected = sorted(entities, keys, Infinity, 0, 50);
    // Each page's winners came after the page was full: the last 50 or the 60 before them.
    expect(expected).not.toEqual(entities.slice(0, 50).map((e) => e.Id));
    for (let i = 0; i < 4; i++) expect(evaluate(entities, q).map((e) => e.Id)).toEqual(expected);
  }
});
