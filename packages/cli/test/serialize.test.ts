import { writeJsonInSlices } from '../src/serialize';

/** The data file written in slices (issue 17: saving never stalls requests) is byte for byte what one JSON.stringify gives. */

async function text(data: Record<string, unknown>): Promise<{ text: string; writes: number }> {
  let out = '';
  let writes = 0;
  await writeJsonInSlices(data as never, async (t) => {
    out += t;
    writes++;
  });
  return { text: out, writes };
}

test.each([
  ['no resources', {}],
  ['an empty resource', { a: [] }],
  [
    'nested values, empty objects and arrays, a one-entity resource, admin data',
    { a: [{ x: 1, y: { z: [1, 2, {}], w: [] } }, {}], b: { s: 'x\ny' }, c: {}, 'Service.Admin.Macro': [{ n: null }] },
  ],
  ['strings needing escapes', { a: [{ s: 'é"\\\u2028\n' }] }],
])('%s', async (_name, data) => {
  expect((await text(data)).text).toBe(`${JSON.stringify(data, null, 2)}\n`);
});

test('a large resource is written in several chunks, with the same text', async () => {
  const data = { big: Array.from({ length: 30000 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] })), small: [{ id: 1 }] };
  const { text: out, writes } = await text(data);
  expect(out).toBe(`${JSON.stringify(data, null, 2)}\n`);
  expect(writes).toBeGreaterThan(1);
});

test('other work runs while a large file is serialized', async () => {
  const data = { big: Array.from({ length: 10000 }, (_, i) => ({ id: i })) };
  let finished = false;
  let ranBeforeTheEnd = false;
  const serializing = writeJsonInSlices(data as never, async () => undefined).then(() => {
    finished = true;
  });
  setImmediate(() => {
    ranBeforeTheEnd = !finished;
  });
  await serializing;
  expect(ranBeforeTheEnd).toBe(true);
});
