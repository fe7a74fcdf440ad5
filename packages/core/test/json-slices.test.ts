import fc from 'fast-check';
import { decodeInSlices, NotUtf8, parseInSlices } from '../src/content-types/json-slices';

/** JSON.parse's value, or its error message. */
function outcome(parse: () => unknown): { value?: unknown; error?: string } {
  try {
    return { value: parse() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** What parseInSlices makes of the text's UTF-8 bytes: a value, JSON.parse's error message, or 'not UTF-8'. */
async function sliced(body: string | Uint8Array, sliceBytes: number): Promise<{ value?: unknown; error?: string }> {
  try {
    return { value: await parseInSlices(typeof body === 'string' ? Buffer.from(body, 'utf8') : body, sliceBytes) };
  } catch (e) {
    return { error: e instanceof NotUtf8 ? 'not UTF-8' : (e as Error).message };
  }
}

/** What json.read did with one JSON.parse: decode (fatal), then parse. */
function whole(body: Uint8Array): { value?: unknown; error?: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    return { error: 'not UTF-8' };
  }
  return outcome(() => JSON.parse(text));
}

/** Text that is JSON, or nearly: an array of values with a character changed, dropped or added somewhere. */
const damaged = fc
  .tuple(
    fc.array(fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }), { minLength: 1, maxLength: 40 }),
    fc.nat(),
    fc.constantFrom('', ',', ']', '}', '[', '{', '"', '\\', 'x', '\n', ' ', '\u0001', '1', ':'),
    fc.constantFrom('replace', 'insert', 'delete', 'none'),
    fc.constantFrom('', '  ', '\n'),
  )
  .map(([values, at, char, how, space]) => {
    const text = `${space}${JSON.stringify(values, null, at % 3 === 0 ? 1 : undefined)}${space}`;
    const i = at % (text.length + 1);
    if (how === 'replace') return text.slice(0, i) + char + text.slice(i + 1);
    if (how === 'insert') return text.slice(0, i) + char + text.slice(i);
    if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
    return text;
  });

describe('a large JSON body parsed in slices is what JSON.parse makes of it', () => {
  test('the same value, or the same error message (its position and quoted text), for damaged and intact arrays', async () => {
    await fc.assert(
      fc.asyncProperty(damaged, fc.constantFrom(16, 40, 200), async (text, sliceBytes) => {
        expect(await sliced(text, sliceBytes)).toEqual(whole(Buffer.from(text, 'utf8')));
      }),
      { numRuns: 3000 },
    );
  });

  test('hand-picked texts: strings holding brackets, commas and escaped quotes; empty arrays; text after the array', async () => {
    const long = JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ i, s: `a"b\\",[{}]${'x'.repeat(i % 7)}\\` })));
    const texts = [
      long,
      `${long} `,
      `${long}]`,
      `${long},`,
      long.slice(0, -1),
      long.slice(0, 1500) + long.slice(1501),
      `${long.slice(0, -1)},]`,
      `${long.slice(0, -1)},,1]`,
      `${long.slice(0, 2000)}}${long.slice(2000)}`,
      `${long.slice(0, -1)}, {"a":1]]`,
      '[]',
      ' [ ] ',
      '[1,,2]',
      '[,]',
      '[1]x',
      '\ufeff[1]',
      '{"a":[1,2]}',
      '"text"',
      '',
      '[',
      `[${'1,'.repeat(100)}1 2]`,
      `[${'"\\\\",'.repeat(50)}"\\"]`,
    ];
    for (const text of texts)
      for (const n of [16, 64, 1000]) expect([text, await sliced(text, n)]).toEqual([text, whole(Buffer.from(text, 'utf8'))]);
  });

  test('bytes that are not UTF-8 anywhere are that error, even after a JSON error earlier in the body', async () => {
    const good = Buffer.from(JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ i, s: `é${i}` }))));
    const bad = Buffer.from([0xff]);
    const bodies = [
      Buffer.concat([good.subarray(0, 500), bad, good.subarray(500)]),
      Buffer.concat([good.subarray(0, -1), bad]),
      Buffer.concat([good.subarray(0, 100), Buffer.from('x'), good.subarray(100, -3), bad, good.subarray(-3)]),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), good]),
      Buffer.concat([good.subarray(0, 1000), Buffer.from([0xc3]), good.subarray(1000)]),
    ];
    for (const body of bodies) for (const n of [16, 300]) expect(await sliced(body, n)).toEqual(whole(body));
  });

  test('decodeInSlices is a fatal decoder: the same text split anywhere, and NotUtf8 on bytes that are not UTF-8', async () => {
    const text = `${'é€𝄞 plain '.repeat(150_000)}`;
    const bytes = Buffer.from(text, 'utf8');
    expect(await decodeInSlices(bytes)).toBe(text);
    await expect(decodeInSlices(Buffer.concat([bytes, Buffer.from([0xc3])]))).rejects.toBeInstanceOf(NotUtf8);
  });
});
