import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { hashOf, parseData, readDataFile } from '../src/data-file';
import { ObjectInSlices } from '../src/data-slices';

/**
 * The data file is parsed from its bytes in slices as they are read (no text of the whole
 * file): the same object JSON.parse gives for its text, whatever the slice and read sizes,
 * and no object at all for text JSON.parse refuses.
 */
function parsePieces(text: string, readBytes: number, sliceBytes: number): ObjectInSlices {
  const parser = new ObjectInSlices(sliceBytes);
  const all = Buffer.from(text, 'utf8');
  let rest = Buffer.alloc(0);
  for (let at = 0; ; ) {
    const read = all.subarray(at, at + readBytes);
    at += read.length;
    const bytes = Buffer.concat([rest, read]);
    const end = read.length === 0;
    const used = parser.feed(bytes, end);
    if (parser.failed || end) return parser;
    rest = bytes.subarray(used);
  }
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Strings with what the byte scan must not take for structure: quotes, escapes, brackets, commas, non-ASCII. */
const tricky = fc.stringMatching(/^[a-zé€😀"\\{}[\],: \n]{0,12}$/u);
const scalar = fc.oneof(tricky, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const nested = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 3 }),
  ),
}));
const entity = fc.dictionary(fc.oneof(tricky, fc.constantFrom('id', '__proto__', '1')), nested.value, { maxKeys: 5 });
const data = fc.array(
  fc.tuple(
    fc.oneof(tricky, fc.constantFrom('Person', '__proto__', '7', 'Person')),
    fc.oneof({ weight: 4, arbitrary: fc.array(entity, { maxLength: 12 }) }, { weight: 1, arbitrary: nested.value }),
  ),
  { maxLength: 4 },
);
/** The object's text as written: properties in order (a name may repeat), each value with JSON.stringify's spacing. */
const textOf = (props: Array<[string, unknown]>, space: number) =>
  `${space ? ' \n' : ''}{${props.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v, null, space)}`).join(space ? ',\n' : ',')}}${space ? '\n' : ''}`;

describe('the data file parsed in slices', () => {
  test("gives JSON.parse's object, properties in its order, for any sizes of slice and read", () => {
    fc.assert(
      fc.property(
        data,
        fc.constantFrom(0, 2),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 200 }),
        (props, space, read, slice) => {
          const text = textOf(props, space);
          const parser = parsePieces(text, read, slice);
          expect(parser.failed).toBe(false);
          expect(parser.done).toBe(true);
          expect(Object.entries(parser.value)).toEqual(Object.entries(JSON.parse(text) as object));
        },
      ),
      { numRuns: 1500 },
    );
  });

  test('a damaged text is refused exactly when JSON.parse refuses it (or holds no object), and read as it reads it otherwise', () => {
    const damage = fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom(',', ']', '}', '[', '{', '"', ':', '\\', ' ', '1'));
    fc.assert(
      fc.property(
        data,
        fc.constantFrom(0, 2),
        fc.array(damage, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 64 }),
        (props, space, cuts, slice) => {
          let text = textOf(props, space);
          for (const [where, drop, insert] of cuts) {
            const at = where % (text.length + 1);
            text = text.slice(0, at) + insert + text.slice(at + drop);
          }
          // As a file holds it: a surrogate pair the damage split is written as U+FFFD.
          text = Buffer.from(text, 'utf8').toString('utf8');
          const expected = jsonOrUndefined(text);
          const isObject = expected !== null && typeof expected === 'object' && !Array.isArray(expected);
          const parser = parsePieces(text, 17, slice);
          expect(parser.done).toBe(isObject);
          if (isObject) expect(Object.entries(parser.value)).toEqual(Object.entries(expected));
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('text that is not one object: a byte-order mark, text after it, an array, nothing', () => {
    for (const text of [
      '\uFEFF{"a":[]}',
      '{"a":[]} x',
      '{"a":[]}{}',
      '[{"a":1}]',
      '',
      '   ',
      '{"a":[1,]}',
      '{"a":[{"b":1},{"b":2},]}',
      '{"a":[{"b":1}}',
    ]) {
      expect(parsePieces(text, 4, 8).done).toBe(false);
    }
  });

  describe('readDataFile', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'resourcery-slices-'));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    test('the same entries and hash as the whole text, with values longer than a read (a 1 MB entity, a 600 KB one-entity resource)', async () => {
      const people = Array.from({ length: 20_000 }, (_, i) => ({ id: i + 1, Name: `Ann "${i}" {é}`, Tags: [i, { x: ']' }] }));
      people[500] = { id: 501, Name: 'x'.repeat(1_000_000), Tags: [] };
      const text = JSON.stringify(
        { Person: people, settings: { note: 'y'.repeat(600_000) }, empty: [], 'Service.Admin.Macro': [] },
        null,
        2,
      );
      const file = join(dir, 'data.json');
      await writeFile(file, text);
      const { parsed, hash } = await readDataFile(file);
      expect(hash).toBe(hashOf(Buffer.from(text)));
      expect(parsed).toEqual(parseData(file, text));
      expect(parsed.entries.get('Person')).toHaveLength(20_000);
      expect(parsed.singular).toEqual(new Set(['settings']));
    });

    test('a file that is not a data file: the message of the whole text', async () => {
      for (const text of ['{"Person":[{"id":1},]}', '{"Person": 3}', '[]', '{"Person":[{"id":1}]} trailing']) {
        const file = join(dir, 'bad.json');
        await writeFile(file, text);
        const expected = (() => {
          try {
            parseData(file, text);
          } catch (e) {
            return (e as Error).message;
          }
          return 'no error';
        })();
        await expect(readDataFile(file)).rejects.toThrow(expected);
      }
    });
  });
});
