import fc from 'fast-check';
import { type Entity } from '@resourcery/core';
import { compareValues, evaluate, type CompiledQuery } from '@resourcery/core/storage';
import { compile } from './query-support';

// The shortcuts of evaluate (distinct on selected values, paging as a slice, an ordered
// page near the end kept from the back) must answer what the plain definition answers:
// project everything, drop outputs whose JSON text came before, sort (stable), slice.

const KEYS = ['City', 'city', 'Age', 'Tags', 'Name', 'constructor'];
const scalar = fc.oneof(
  fc.constantFrom('Oslo', 'oslo', '1', '', 'null'),
  fc.constantFrom(1, 2, 0, -0, 1.5, Number.NaN, Number.POSITIVE_INFINITY),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 2 }) },
  { weight: 1, arbitrary: fc.record({ Zip: scalar }) },
);
const entity = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 5 }) as fc.Arbitrary<Entity>;
const data = fc.array(entity, { maxLength: 60 });

const SELECTS = [
  'select=City',
  'select=city',
  'select=Tags',
  'select=City,Age',
  'select=Age,City,Tags',
  'select=constructor',
  'select=Name.Zip',
  'add=Name.Length&select=City',
];
const meta = fc
  .record({
    select: fc.option(fc.constantFrom(...SELECTS), { nil: undefined }),
    distinct: fc.option(fc.constant('distinct=true'), { nil: undefined }),
    order: fc.option(fc.constantFrom('order_asc=Age', 'order_desc=Age', 'order_asc=City', 'order_desc=city'), { nil: undefined }),
    offset: fc.option(
      fc.integer({ min: -70, max: 70 }).map((n) => `offset=${n}`),
      { nil: undefined },
    ),
    limit: fc.option(
      fc.integer({ min: -1, max: 12 }).map((n) => `limit=${n}`),
      { nil: undefined },
    ),
  })
  .map(
    (m) =>
      Object.values(m)
        .filter((x) => x !== undefined)
        .join('&') || '_',
  );

/** evaluate by its definition, with no shortcut. */
function reference(entities: Entity[], q: CompiledQuery): Entity[] {
  const m = q.meta;
  let out = q.project === null ? entities.slice() : entities.map(q.project);
  if (m.distinct) {
    const seen = new Set<string>();
    out = out.filter((e) => {
      const text = JSON.stringify(e);
      return !seen.has(text) && seen.add(text) !== undefined;
    });
  }
  if (m.order !== null) {
    const order = m.order;
    // The order reads the stored entity unless projection renamed or added the name.
    const source = q.sourceOrder;
    const keyed = out.map((e, i) => ({
      e,
      i,
      k: order.map((key, j) => (source !== null && !m.distinct ? source[j].get(entities[i]) : key.locator.getOutput(e))),
    }));
    const cmp = (a: unknown[], b: unknown[]) => {
      for (let j = 0; j < order.length; j++) {
        const c = order[j].descending ? compareValues(b[j], a[j]) : compareValues(a[j], b[j]);
        if (c !== 0) return c;
      }
      return 0;
    };
    keyed.sort((a, b) => cmp(a.k, b.k) || a.i - b.i);
    out = keyed.map((x) => x.e);
  }
  const start = m.offset >= 0 ? m.offset : Math.max(0, out.length + m.offset);
  return out.slice(start, m.limit < 0 ? undefined : start + m.limit);
}

test('distinct, paging and ordered pages answer what their definition answers', () => {
  fc.assert(
    fc.property(data, meta, (entities, metaText) => {
      const q = compile('_', metaText);
      const expected = reference(entities, q);
      expect(evaluate(entities, q)).toEqual(expected);
      // Twice: the first call taught locators the data's spellings.
      expect(evaluate(entities, q)).toEqual(expected);
    }),
    { numRuns: 1500 },
  );
});

test('an ordered page at the end of many entities is the end of the stable sort', () => {
  const entities = Array.from({ length: 1000 }, (_, i) => ({ Id: i, Age: (i * 5) % 7 }));
  const ascending = [...entities].sort((a, b) => a.Age - b.Age || a.Id - b.Id).map((e) => e.Id);
  const descending = [...entities].sort((a, b) => b.Age - a.Age || a.Id - b.Id).map((e) => e.Id);
  const ids = (meta: string) => evaluate(entities, compile('_', meta)).map((e) => e.Id);
  expect(ids('order_asc=Age&offset=990')).toEqual(ascending.slice(990));
  expect(ids('order_desc=Age&offset=-3')).toEqual(descending.slice(-3));
  expect(ids('order_asc=Age&offset=995&limit=2')).toEqual(ascending.slice(995, 997));
  expect(ids('order_desc=Age&offset=2000')).toEqual([]);
});

test('paging without conditions hands out a copy, never the given array', () => {
  const entities = [{ Id: 1 }, { Id: 2 }];
  for (const meta of ['_', 'offset=0', 'offset=-5', 'distinct=true', 'order_asc=Id&offset=-2']) {
    const out = evaluate(entities, compile('_', meta));
    expect(out).toEqual(entities);
    expect(out).not.toBe(entities);
  }
});
