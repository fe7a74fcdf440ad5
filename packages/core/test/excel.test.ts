import { createService, MemoryStorage, type Entity, type Service } from '@resourcery/core';
import { call } from './handle-support';
import { deflatedZip, EXCEL, readBody, readSheets, storedZip, workbookOf } from './content-types-support';

/** Spreadsheet (Excel format) output and input (SPEC 2.2, DESIGN 7). */

const BOOKS: Entity[] = [
  {
    Isbn: '0262033844',
    Title: 'Introduction to Algorithms',
    Pages: 1312,
    InPrint: true,
    Authors: ['Cormen', 'Leiserson'],
    Publisher: { Name: 'MIT Press', City: 'Cambridge' },
  },
  {
    Isbn: '0201633612',
    Title: 'Design Patterns',
    Pages: 395,
    InPrint: false,
    Authors: ['Gamma'],
    Publisher: { Name: 'Addison-Wesley', City: 'Boston' },
  },
  { Isbn: '02139', Title: '', Pages: 0.5, InPrint: true, Authors: [], Publisher: {} },
];

function shop(books: Entity[] = BOOKS): Service {
  const service = createService();
  service.addResource({ name: 'Shop.Book', storage: new MemoryStorage(books.map((b) => ({ ...b }))) });
  service.addResource({ name: 'Shop.Archive' });
  return service;
}

async function getExcel(service: Service, uri: string) {
  const r = await service.handle({ method: 'GET', uri, headers: { accept: 'excel' } });
  return { ...r, ...(await readBody(r.body)) };
}

/** A request with a binary body; the answer's bytes, and its JSON when it is JSON. */
async function send(service: Service, method: string, uri: string, headers: Record<string, string>, body: Buffer) {
  const r = await service.handle({ method, uri, headers, body });
  const read = await readBody(r.body);
  const json = r.headers['content-type']?.startsWith('application/json') ? JSON.parse(read.bytes.toString('utf8')) : undefined;
  return { status: r.status, headers: r.headers, bytes: read.bytes, json };
}

function postExcel(service: Service, uri: string, body: Buffer, accept = 'application/json;raw=true') {
  return send(service, 'POST', uri, { 'content-type': EXCEL, accept }, body);
}

describe('Excel output is an .xlsx file download', () => {
  test('content type, attachment file name <Resource>_<yyMMddHHmmss>.xlsx, ZIP bytes', async () => {
    const r = await getExcel(shop(), '/Book');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe(EXCEL);
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="Shop\.Book_\d{12}\.xlsx"$/);
    expect(r.bytes.subarray(0, 4).toString('hex')).toBe('504b0304');
  });

  test('nothing found is 204 with no file', async () => {
    const r = await shop().handle({ method: 'GET', uri: '/Book/Pages>5000', headers: { accept: 'excel' } });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
  });

  test('the body is streamed in chunks, not built in memory first', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => ({ Id: i, Title: `Book number ${i}`, Note: 'x'.repeat(40) }));
    const r = await getExcel(shop(many), '/Book');
    expect(r.streamed).toBe(true);
    expect(r.chunks).toBeGreaterThan(1);
    expect((await readSheets(r.bytes))[0].rows).toHaveLength(5001);
  });

  test('a download abandoned after its first chunk ends cleanly', async () => {
    const many = Array.from({ length: 20000 }, (_, i) => ({ Id: i, Title: `Book number ${i}` }));
    const service = shop(many);
    const r = await service.handle({ method: 'GET', uri: '/Book', headers: { accept: 'excel' } });
    const iterator = (r.body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    await expect(iterator.return!()).resolves.toMatchObject({ done: true });
    expect((await getExcel(service, '/Book/Id<3')).status).toBe(200);
  });
});

describe('Excel output: one sheet, a header row of property names in first-seen order, one row per entity', () => {
  test('the header row is the union of the property names, in the order first seen', async () => {
    const service = shop([{ B: 1 }, { A: 2, B: 3 }, { C: 4, A: 5 }]);
    const [sheet, ...others] = await readSheets((await getExcel(service, '/Book')).bytes);
    expect(others).toHaveLength(0);
    expect(sheet.name).toBe('Data');
    expect(sheet.rows).toEqual([['B', 'A', 'C'], [1], [3, 2], [undefined, 5, 4]]);
  });

  test('strings are text cells, numbers numbers, booleans booleans, nested values JSON text', async () => {
    const [sheet] = await readSheets((await getExcel(shop(), "/Book/Isbn='02139'")).bytes);
    expect(sheet.rows[0]).toEqual(['Isbn', 'Title', 'Pages', 'InPrint', 'Authors', 'Publisher']);
    expect(sheet.rows[1]).toEqual(['02139', { richText: [{ text: '' }] }, 0.5, true, '[]', '{}']);
    expect(sheet.types[1]).toEqual([3, 8, 2, 9, 3, 3]);
  });

  test('null and missing properties are empty cells', async () => {
    const [sheet] = await readSheets((await getExcel(shop([{ A: 1, B: null, C: 'c' }, { C: 'd' }]), '/Book')).bytes);
    expect(sheet.rows).toEqual([
      ['A', 'B', 'C'],
      [1, undefined, 'c'],
      [undefined, undefined, 'd'],
    ]);
    expect(sheet.types[1][1]).toBe(0);
  });

  test('select, order and limit shape the rows like any output', async () => {
    const [sheet] = await readSheets((await getExcel(shop(), '/Book/_/select=Pages,Isbn&order_asc=Pages&limit=2')).bytes);
    expect(sheet.rows).toEqual([
      ['Pages', 'Isbn'],
      [0.5, '02139'],
      [395, '0201633612'],
    ]);
  });
});

describe('a GET as Excel POSTed to another resource gives the same entities', () => {
  test('every value comes back with its type: strings, numbers, booleans, arrays, objects, empty strings', async () => {
    const service = shop();
    const file = (await getExcel(service, '/Book')).bytes;
    const posted = await postExcel(service, '/Archive', file);
    expect(posted.status).toBe(201);
    expect(posted.json).toEqual(BOOKS);
    expect((await call(service, 'GET', '/Archive', { headers: { accept: 'json;raw=true' } })).json).toEqual(BOOKS);
  });

  test.each([EXCEL, 'application/service-excel', 'excel', 'Excel; charset=binary'])(
    'Content-Type: %s reads the workbook',
    async (contentType) => {
      const service = shop();
      const r = await send(
        service,
        'POST',
        '/Archive',
        { 'content-type': contentType, accept: 'json;raw=true' },
        (await getExcel(service, '/Book/_/limit=1')).bytes,
      );
      expect(r.status).toBe(201);
      expect(r.json).toEqual([BOOKS[0]]);
    },
  );

  test('null comes back as null and missing as missing (the types sheet tells the empty cells apart)', async () => {
    const service = shop([{ Isbn: 'a', Subtitle: null }, { Isbn: 'b' }]);
    const posted = await postExcel(service, '/Archive', (await getExcel(service, '/Book')).bytes);
    expect(posted.json).toEqual([{ Isbn: 'a', Subtitle: null }, { Isbn: 'b' }]);
  });

  test('a resource with a schema accepts its own export, optional properties left blank', async () => {
    const service = createService();
    const schema = {
      type: 'object',
      properties: { Isbn: { type: 'string' }, Pages: { type: 'integer' }, Subtitle: { type: 'string' } },
      required: ['Isbn'],
    };
    service.addResource({
      name: 'Book',
      schema,
      storage: new MemoryStorage([
        { Isbn: '0262033844', Pages: 1312, Subtitle: 'Third edition' },
        { Isbn: '0201633612', Pages: 395 },
      ]),
    });
    service.addResource({ name: 'Copy', schema });
    const posted = await postExcel(service, '/Copy', (await getExcel(service, '/Book')).bytes);
    expect(posted.status).toBe(201);
    expect(posted.json).toEqual([
      { Isbn: '0262033844', Pages: 1312, Subtitle: 'Third edition' },
      { Isbn: '0201633612', Pages: 395 },
    ]);
  });
});

describe('reading takes the first sheet; row 1 names the properties, every later row is an entity', () => {
  test('cells a spreadsheet program writes are read as values', async () => {
    const file = await workbookOf({
      Books: [
        ['Isbn', 'Title', 'Pages', 'InPrint', 'Released', 'Link', 'Total', 'Broken'],
        [
          '0262033844',
          { richText: [{ text: 'Intro ' }, { text: 'to Algorithms', font: { bold: true } }] },
          1312,
          true,
          new Date(Date.UTC(2009, 6, 31)),
          { text: 'MIT', hyperlink: 'https://mitpress.mit.edu' },
          { formula: 'C2*2', result: 2624 },
          { error: '#N/A' },
        ],
      ],
      Ignored: [['Other'], ['sheet']],
    });
    const posted = await postExcel(shop(), '/Archive', file);
    expect(posted.status).toBe(201);
    expect(posted.json).toEqual([
      {
        Isbn: '0262033844',
        Title: 'Intro to Algorithms',
        Pages: 1312,
        InPrint: true,
        Released: '2009-07-31T00:00:00.000Z',
        Link: 'MIT',
        Total: 2624,
      },
    ]);
  });

  test('entities keep row order; empty rows are skipped; property order follows the columns', async () => {
    const file = await workbookOf({ Sheet1: [['B', 'A'], [1, 2], [], [undefined, 3], [4]] });
    expect((await postExcel(shop(), '/Archive', file)).json).toEqual([{ B: 1, A: 2 }, { A: 3 }, { B: 4 }]);
  });

  test('text that is not a JSON object or array stays text', async () => {
    const file = await workbookOf({ S: [['V'], ['02139'], ['true'], ['null'], ['[draft]'], ['{not json}'], ['12.50']] });
    expect((await postExcel(shop(), '/Archive', file)).json.map((e: Entity) => e.V)).toEqual([
      '02139',
      'true',
      'null',
      '[draft]',
      '{not json}',
      '12.50',
    ]);
  });

  test('a sheet with only a header row (or nothing) writes nothing', async () => {
    for (const rows of [[['Isbn', 'Title']], []]) {
      const r = await postExcel(shop(), '/Archive', await workbookOf({ S: rows }), 'json');
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ DataCount: 0, InsertedCount: 0 });
    }
  });

  test('PUT and PATCH read Excel too', async () => {
    const service = shop();
    const headers = { 'content-type': 'excel', accept: 'json;raw=true' };
    const patch = await send(service, 'PATCH', "/Book/Isbn='02139'", headers, await workbookOf({ S: [['Title'], ['Untitled']] }));
    expect(patch.json).toEqual([{ ...BOOKS[2], Title: 'Untitled' }]);
    const put = await send(
      service,
      'PUT',
      "/Book/Isbn='0000000000'",
      headers,
      await workbookOf({
        S: [
          ['Title', 'Pages'],
          ['New', 12],
        ],
      }),
    );
    expect(put.status).toBe(201);
    expect(put.json).toEqual([{ Isbn: '0000000000', Title: 'New', Pages: 12 }]);
  });
});

describe('a body that is not a readable workbook is 400 FailedExcelRead', () => {
  async function expectFailedRead(body: Buffer, message: RegExp) {
    const service = shop();
    const r = await postExcel(service, '/Archive', body);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ Status: 'fail', ErrorCode: 'FailedExcelRead' });
    expect(r.json.Message).toMatch(message);
    expect((await call(service, 'REPORT', '/Archive', { headers: { accept: 'json;raw=true' } })).json).toBe(0);
  }

  test('text, JSON or CSV sent as Excel', async () => {
    await expectFailedRead(Buffer.from('Isbn,Title\n1,A\n'), /not a ZIP/);
    await expectFailedRead(Buffer.from('[{"Isbn":"1"}]'), /not a ZIP/);
  });

  test('a workbook cut short', async () => {
    const file = (await getExcel(shop(), '/Book')).bytes;
    await expectFailedRead(file.subarray(0, file.length - 200), /not/);
    // Damage the sheet's compressed data (parts the reader does not need may be damaged harmlessly).
    const sheet = file.indexOf('xl/worksheets/sheet1.xml') + 100;
    await expectFailedRead(Buffer.concat([file.subarray(0, sheet), Buffer.alloc(100, 0xff), file.subarray(sheet + 100)]), /damaged/);
  });

  test('a ZIP that is not a workbook', async () => {
    await expectFailedRead(storedZip([{ name: 'hello.txt', data: 'hello' }]), /no workbook part/);
  });

  test('two columns with the same property name', async () => {
    await expectFailedRead(
      await workbookOf({
        S: [
          ['Isbn', 'Title', 'Isbn'],
          ['1', 'A', '2'],
        ],
      }),
      /Column C repeats the property name 'Isbn'/,
    );
  });

  test('a value in a column without a property name', async () => {
    await expectFailedRead(
      await workbookOf({
        S: [
          ['Isbn', undefined],
          ['1', 'stray'],
        ],
      }),
      /Cell B2 .* no property name/,
    );
  });
});

describe('a workbook that unpacks to more than the limit is 413 PayloadTooLarge, counted while it unpacks', () => {
  test('sizes the ZIP declares are not trusted: a part that inflates past the limit is stopped', async () => {
    // 200 MB of zeros deflate to about 200 KB; the directory claims 100 bytes.
    const bomb = deflatedZip([{ name: 'xl/workbook.xml', data: Buffer.alloc(200 * 1024 * 1024) }], 100);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const service = shop();
    const r = await postExcel(service, '/Archive', bomb);
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ ErrorCode: 'PayloadTooLarge' });
    expect(r.json.Message).toMatch(/unpacks to more than/);
    expect((await call(service, 'REPORT', '/Archive', { headers: { accept: 'json;raw=true' } })).json).toBe(0);
  });

  test('a huge declared size alone is not refused: what counts is what inflates', async () => {
    const small = storedZip([{ name: 'xl/worksheets/sheet1.xml', data: '<x/>' }], 0xfffffff0);
    const r = await postExcel(shop(), '/Archive', small);
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('FailedExcelRead');
  });
});

describe('other results as Excel: REPORT gives a Summary sheet, changes give Data and Summary', () => {
  test('REPORT: one sheet "Summary" with the Count', async () => {
    const r = await shop().handle({ method: 'REPORT', uri: '/Book/InPrint=true', headers: { accept: 'excel' } });
    const sheets = await readSheets((await readBody(r.body)).bytes);
    expect(sheets).toEqual([{ name: 'Summary', rows: [['Count'], [2]], types: [[3], [2]] }]);
  });

  test('POST: the inserted entities in "Data", the envelope counts in "Summary"', async () => {
    const r = await postExcel(shop(), '/Archive', await workbookOf({ S: [['Isbn'], ['1'], ['2']] }), 'excel');
    expect(r.status).toBe(201);
    expect(r.headers['content-disposition']).toMatch(/filename="Shop\.Archive_\d{12}\.xlsx"/);
    const sheets = await readSheets(r.bytes);
    expect(sheets.map((s) => [s.name, s.rows])).toEqual([
      ['Data', [['Isbn'], ['1'], ['2']]],
      [
        'Summary',
        [
          ['DataCount', 'InsertedCount'],
          [2, 2],
        ],
      ],
    ]);
  });

  test('DELETE: an empty "Data" sheet and the DeletedCount', async () => {
    const r = await shop().handle({ method: 'DELETE', uri: '/Book/InPrint=true/unsafe=true', headers: { accept: 'excel' } });
    const sheets = await readSheets((await readBody(r.body)).bytes);
    expect(sheets.map((s) => [s.name, s.rows])).toEqual([
      ['Data', []],
      [
        'Summary',
        [
          ['DataCount', 'DeletedCount'],
          [0, 2],
        ],
      ],
    ]);
  });
});
