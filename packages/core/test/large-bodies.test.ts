import { MemoryStorage, Service, type Entity } from '@resourcery/core';
import { call, RAW, turnsDuring } from './handle-support';
import { EXCEL, storedZip, workbookOf } from './content-types-support';

/**
 * A large body is read in slices, other requests getting turns of the event loop between
 * them (docs/limits.md#large-work): a JSON array of many entities is parsed a slice at a
 * time, its entities checked and prepared in slices, and an Excel import reads its sheet in
 * pieces and makes rows into entities 1,000 at a time. A cheap request sent while such a
 * body is read is answered before it.
 */

function service(options: ConstructorParameters<typeof Service>[0] = {}): Service {
  const s = new Service({ events: false, ...options });
  s.addResource({ name: 'Person', storage: new MemoryStorage() });
  s.addResource({ name: 'Small', storage: new MemoryStorage([{ Id: 1 }]) });
  return s;
}

const people = (n: number): Entity[] =>
  Array.from({ length: n }, (_, i) => ({ Id: i + 1, Name: `person "${i}" [é]`, Tags: ['a', { b: i }], City: ['Oslo', 'Lima'][i % 2] }));

/**
 * Sends `large` (its answer's head is enough), then after one turn a cheap GET; returns
 * the order in which they were answered.
 */
async function whichFirst(s: Service, large: () => Promise<{ status: number }>): Promise<string[]> {
  const done: string[] = [];
  const big = large().then((r) => done.push(`large ${r.status}`));
  await new Promise((resolve) => setImmediate(resolve));
  const cheap = s.handle({ method: 'GET', uri: '/Small/Id=1', headers: RAW, body: null }).then((r) => done.push(`cheap ${r.status}`));
  await Promise.all([big, cheap]);
  return done;
}

describe('a large JSON body', () => {
  test('a cheap request sent while 30,000 entities (2 MB) are read and written is answered first', async () => {
    const s = service();
    const body = JSON.stringify(people(30_000));
    const order = await whichFirst(s, () =>
      s.handle({ method: 'POST', uri: '/Person', headers: { 'content-type': 'application/json' }, body }),
    );
    expect(order).toEqual(['cheap 200', 'large 201']);
    // What was stored is what JSON.parse makes of the body.
    expect((await call(s, 'GET', '/Person/_/limit=99999999', { headers: RAW })).json).toEqual(JSON.parse(body));
  });

  test('its errors are those of one JSON.parse: the message, the position and the quoted text', async () => {
    const s = service();
    const text = JSON.stringify(people(20_000));
    for (const bad of [`${text.slice(0, 900_000)}}${text.slice(900_001)}`, `${text.slice(0, -1)},]`, `${text}x`, text.slice(0, -2)]) {
      let expected = '';
      try {
        JSON.parse(bad);
      } catch (e) {
        expected = (e as Error).message;
      }
      const reply = await call(s, 'POST', '/Person', { body: bad, headers: RAW });
      expect([reply.status, reply.json.ErrorCode, reply.json.Message]).toEqual([
        400,
        'FailedJsonDeserialization',
        `The body is not valid JSON: ${expected}`,
      ]);
    }
    const notUtf8 = Buffer.concat([Buffer.from(text.slice(0, 10)), Buffer.from([0xff]), Buffer.from(text.slice(10))]);
    const refused = await s.handle({
      method: 'POST',
      uri: '/Person',
      headers: { ...RAW, 'content-type': 'application/json' },
      body: notUtf8,
    });
    expect([refused.status, JSON.parse(refused.body as string).Message]).toEqual([400, 'The body is not valid JSON: it is not UTF-8 text']);
    expect((await call(s, 'REPORT', '/Person', { headers: RAW })).json).toBe(0);
  });

  test('an item nested past maxNestingDepth deep in a large body is named by its position', async () => {
    const s = service({ maxNestingDepth: 5 });
    const items = people(12_000);
    items[9_876] = { Id: 0, Deep: [[[[[[1]]]]]] };
    const reply = await call(s, 'POST', '/Person', { body: items, headers: RAW });
    expect([reply.status, reply.json.ErrorCode]).toEqual([400, 'InvalidResourceEntity']);
    expect(reply.json.Message).toContain('Item 9876 of the body nests objects and arrays deeper than 5 levels');
  });
});

/**
 * A workbook whose parts are stored, not deflated (nothing is unpacked on another thread, so
 * only the reader's own slices give other requests a turn), its sheet in SpreadsheetML
 * with the x: prefix, inline strings and an empty self-closing row after every 100th.
 */
function storedWorkbook(rows: unknown[][]): Buffer {
  const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const cell = (v: unknown, c: number, r: number) =>
    typeof v === 'number'
      ? `<x:c r="${String.fromCharCode(65 + c)}${r}"><x:v>${v}</x:v></x:c>`
      : `<x:c r="${String.fromCharCode(65 + c)}${r}" t="inlineStr"><x:is><x:t>${esc(String(v))}</x:t></x:is></x:c>`;
  let r = 0;
  const xml = rows
    .map((row, i) => {
      r++;
      const line = `<x:row r="${r}">${row.map((v, c) => cell(v, c, r)).join('')}</x:row>`;
      return i % 100 === 99 ? `${line}\n<x:row r="${++r}"/>` : line;
    })
    .join('\n');
  const ns =
    'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
  return storedZip([
    {
      name: 'xl/workbook.xml',
      data: `<x:workbook ${ns}><x:sheets><x:sheet name="Person" sheetId="1" r:id="rId1"/></x:sheets></x:workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    },
    { name: 'xl/worksheets/sheet1.xml', data: `<?xml version="1.0"?><x:worksheet ${ns}><x:sheetData>${xml}</x:sheetData></x:worksheet>` },
  ]);
}

describe('an Excel import of more than 1,000 rows', () => {
  const rows = people(5_000).map((e) => [e.Id as number, e.Name as string, e.City as string]);
  const expected = rows.map(([Id, Name, City]) => ({ Id, Name, City }));

  test.each([
    ['written by a spreadsheet program (deflated)', () => workbookOf({ Person: [['Id', 'Name', 'City'], ...rows] })],
    ['stored, prefixed, with empty rows', async () => storedWorkbook([['Id', 'Name', 'City'], ...rows])],
  ])('%s: yields between slices, a cheap request sent while it is read is answered first; every row is read', async (_, make) => {
    const s = service();
    const body = await make();
    const order = await whichFirst(s, () => s.handle({ method: 'POST', uri: '/Person', headers: { 'content-type': EXCEL }, body }));
    expect(order).toEqual(['cheap 200', 'large 201']);
    expect((await call(s, 'GET', '/Person/_/limit=99999999', { headers: RAW })).json).toEqual(expected);
  });

  test('a stored workbook (nothing unpacked on another thread) gives the event loop turns while its 5,000 rows are read and made entities', async () => {
    const turnsOf = (n: number) => {
      const body = storedWorkbook([['Id', 'Name', 'City'], ...rows.slice(0, n)]);
      const s = service();
      return turnsDuring(() => s.handle({ method: 'POST', uri: '/Person', headers: { 'content-type': EXCEL }, body }));
    };
    // Beyond the turns a small import takes: the sheet read in pieces and 1,000 rows a slice, the
    // rows made entities likewise, and the writing of its answer. The sheet read whole, rows in
    // slices: 10; rows not in slices either: 5; now 15.
    const small = await turnsOf(10);
    const large = await turnsOf(5_000);
    expect(large - small).toBeGreaterThanOrEqual(12);
  });
});
