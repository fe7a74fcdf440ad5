import fc from 'fast-check';
import { createService, MemoryStorage, type Entity } from '@resourcery/core';
import { compareValues, evaluate } from '@resourcery/core/storage';
import { setCodeGeneration } from '@resourcery/core/internal';
import { call, RAW } from './handle-support';
import { compile, ids } from './query-support';

// Several order keys (docs/uri.md "order_asc, order_desc").

const POSTS: Entity[] = [
  { Id: 1, Author: { Name: 'bo' }, Views: 10, Title: 'a' },
  { Id: 2, Author: { Name: 'ann' }, Views: 5, Title: 'b' },
  { Id: 3, Author: { Name: 'bo' }, Views: 30, Title: 'c' },
  { Id: 4, Author: { Name: 'ann' }, Views: 50, Title: 'd' },
  { Id: 5, Author: { Name: 'cy' }, Views: 10, Title: 'e' },
  { Id: 6, Author: { Name: 'ann' }, Views: 5, Title: 'f' },
];

describe('several order keys', () => {
  test('order_asc=Author.Name&order_desc=Views sorts by both, not by the last one alone', () => {
    expect(ids(POSTS, '_', 'order_asc=Author.Name&order_desc=Views')).toEqual([4, 2, 6, 3, 1, 5]);
  });

  test('the one written first is the primary order', () => {
    expect(ids(POSTS, '_', 'order_desc=Views&order_asc=Author.Name')).toEqual([4, 3, 1, 5, 2, 6]);
  });

  test('comma-separated keys; ties of every key keep storage order; with pages, select and rename', () => {
    expect(ids(POSTS, '_', 'order_asc=Views,Author.Name')).toEqual([2, 6, 1, 5, 3, 4]);
    expect(ids(POSTS, '_', 'order_asc=Views,Author.Name&offset=1&limit=3')).toEqual([6, 1, 5]);
    expect(ids(POSTS, '_', 'order_asc=Views,Author.Name&offset=-2')).toEqual([3, 4]);
    expect(ids(POSTS, 'Views<40', 'order_desc=Views,Title&limit=3')).toEqual([3, 5, 1]);
    const renamed = evaluate(POSTS, compile('_', 'rename=Views->Seen&select=Seen,Title&order_desc=Seen&order_asc=Title&limit=3'));
    expect(renamed).toEqual([
      { Seen: 50, Title: 'd' },
      { Seen: 30, Title: 'c' },
      { Seen: 10, Title: 'a' },
    ]);
    expect(evaluate(POSTS, compile('_', 'select=Author.Name,Views&distinct=true&order_asc=Author.Name&order_desc=Views'))).toEqual([
      { 'Author.Name': 'ann', Views: 50 },
      { 'Author.Name': 'ann', Views: 5 },
      { 'Author.Name': 'bo', Views: 30 },
      { 'Author.Name': 'bo', Views: 10 },
      { 'Author.Name': 'cy', Views: 10 },
    ]);
  });

  test('when order_asc or order_desc repeats, the last of each wins', () => {
    expect(ids(POSTS, '_', 'order_asc=Title&order_asc=Views&order_desc=Id')).toEqual([6, 2, 5, 1, 3, 4]);
  });

  test('random data and keys: a stable sort by each key in turn, on both plans, with pages', () => {
    const entity = fc.record(
      {
        A: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('x', 'y', null)),
        B: fc.integer({ min: 0, max: 2 }),
        C: fc.constantFrom('p', 'q'),
      },
      { requiredKeys: [] },
    );
    const key = fc.tuple(fc.constantFrom('A', 'B', 'C'), fc.boolean());
    fc.assert(
      fc.property(
        fc.array(entity, { maxLength: 30 }),
        fc.array(key, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: -1, max: 5 }),
        (rows, keys, offset, limit) => {
          const data = rows.map((r, i) => ({ ...r, Id: i }));
          // Each key in its own meta-condition, in order: no name repeats (order_asc or order_desc once each), so group them.
          const asc = keys.filter(([, d]) => !d).map(([l]) => l);
          const desc = keys.filter(([, d]) => d).map(([l]) => l);
          const first = keys[0][1];
          const parts = [asc.length ? `order_asc=${asc.join(',')}` : '', desc.length ? `order_desc=${desc.join(',')}` : ''].filter(Boolean);
          if (first) parts.reverse();
          const effective = [
            ...(first ? desc.map((l) => [l, true] as const) : asc.map((l) => [l, false] as const)),
            ...(first ? asc.map((l) => [l, false] as const) : desc.map((l) => [l, true] as const)),
          ];
          const sorted = [...data].sort((x, y) => {
            for (const [l, d] of effective) {
              const c = compareValues((x as Entity)[l], (y as Entity)[l]);
              if (c !== 0) return d ? -c : c;
            }
            return x.Id - y.Id;
          });
          const end = limit < 0 ? sorted.length : offset + limit;
          const expected = sorted.slice(offset, end).map((e) => e.Id);
          const meta = `${parts.join('&')}&offset=${offset}&limit=${limit}`;
          for (const generation of [false, true]) {
            setCodeGeneration(generation);
            const q = compile('B!=9', meta);
            for (let i = 0; i < 3; i++) expect(evaluate(data, q).map((e) => e.Id)).toEqual(expected);
          }
          setCodeGeneration(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('random keys over pages near either end of a larger set (the kept-best paths): a stable sort by each key in turn', () => {
    const entity = fc.record(
      { A: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('x', null)), B: fc.integer({ min: 0, max: 2 }) },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(
        fc.array(entity, { minLength: 40, maxLength: 160 }),
        fc.array(fc.tuple(fc.constantFrom('A', 'B', 'Id'), fc.boolean()), { minLength: 2, maxLength: 3 }),
        fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: -6, max: -1 })),
        fc.integer({ min: 1, max: 4 }),
        (rows, keys, offset, limit) => {
          const data = rows.map((r, i) => ({ ...r, Id: i % 7 }));
          const seen = new Set<string>();
          const unique = keys.filter(([l]) => !seen.has(l) && seen.add(l));
          const asc = unique.filter(([, d]) => !d).map(([l]) => l);
          const desc = unique.filter(([, d]) => d).map(([l]) => l);
          const first = unique[0][1];
          const parts = [asc.length ? `order_asc=${asc.join(',')}` : '', desc.length ? `order_desc=${desc.join(',')}` : ''].filter(Boolean);
          if (first) parts.reverse();
          const effective = first
            ? [...desc.map((l) => [l, true] as const), ...asc.map((l) => [l, false] as const)]
            : [...asc.map((l) => [l, false] as const), ...desc.map((l) => [l, true] as const)];
          const position = new Map(data.map((e, i) => [e, i]));
          const sorted = [...data].sort((x, y) => {
            for (const [l, d] of effective) {
              const c = compareValues((x as Entity)[l], (y as Entity)[l]);
              if (c !== 0) return d ? -c : c;
            }
            return position.get(x)! - position.get(y)!;
          });
          const start = offset >= 0 ? offset : sorted.length + offset;
          const expected = sorted.slice(start, start + limit);
          const q = compile('_', `${parts.join('&')}&offset=${offset}&limit=${limit}`);
          expect(evaluate(data, q)).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("a caller's order replaces a view's or macro's whole order", () => {
  function service() {
    const s = createService();
    s.addResource({
      name: 'Post',
      storage: new MemoryStorage(structuredClone(POSTS)),
      views: [{ name: 'Ranked', meta: 'order_desc=Views&order_asc=Author.Name' }],
    });
    return s;
  }
  const idsOf = async (s: ReturnType<typeof service>, uri: string) =>
    (await call(s, 'GET', uri, { headers: RAW })).json.map((e: Entity) => e.Id);

  test('a view', async () => {
    const s = service();
    expect(await idsOf(s, '/Post-Ranked')).toEqual([4, 3, 1, 5, 2, 6]);
    // Not Views-then-Title: the view's keys are gone, ties keep storage order.
    expect(await idsOf(s, '/Post-Ranked/_/order_desc=Title')).toEqual([6, 5, 4, 3, 2, 1]);
    expect(await idsOf(s, '/Post-Ranked/_/order_asc=Author.Name')).toEqual([2, 4, 6, 1, 3, 5]);
  });

  test('a macro', async () => {
    const s = service();
    const saved = await call(s, 'POST', '/Service.Admin.Macro', { body: { Name: 'top', Uri: '/Post/_/order_desc=Views,Id' } });
    expect(saved.status).toBe(201);
    expect(await idsOf(s, '/$top')).toEqual([4, 3, 5, 1, 6, 2]);
    expect(await idsOf(s, '/$top/_/order_asc=Author.Name')).toEqual([2, 4, 6, 1, 3, 5]);
    expect(await idsOf(s, '/$top/_/limit=2')).toEqual([4, 3]);
  });
});
