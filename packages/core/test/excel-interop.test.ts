import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as XLSX from 'xlsx';
import { createService, type Entity, type Service } from '@resourcery/core';
import { EXCEL, readBody, storedZip } from './content-types-support';
import { readEntry, zipEntries } from '../src/content-types/zip';

/**
 * Workbooks written by other programs (SheetJS in the tests; LibreOffice and openpyxl as
 * committed fixtures, made by the scripts beside them) read as the values their cells hold.
 */

const FIXTURES = join(__dirname, 'fixtures', 'excel');

function service(): Service {
  const s = createService();
  s.addResource({ name: 'Item' });
  return s;
}

async function post(s: Service, body: Buffer, contentType = EXCEL) {
  const r = await s.handle({
    method: 'POST',
    uri: '/Item',
    headers: { 'content-type': contentType, accept: 'application/json;raw=true' },
    body,
  });
  return { status: r.status, json: JSON.parse((await readBody(r.body)).bytes.toString('utf8')) };
}

async function exportExcel(s: Service, uri = '/Item'): Promise<Buffer> {
  const r = await s.handle({ method: 'GET', uri, headers: { accept: 'excel' } });
  return (await readBody(r.body)).bytes;
}

/** A workbook SheetJS writes from cell objects (`{ t, v, f }`), one sheet. */
function sheetJs(cells: Record<string, XLSX.CellObject>, options: XLSX.WritingOptions = {}): Buffer {
  const ws: XLSX.WorkSheet = { ...cells };
  const refs = Object.keys(cells).map((k) => XLSX.utils.decode_cell(k));
  ws['!ref'] = XLSX.utils.encode_range({
    s: { r: 0, c: 0 },
    e: { r: Math.max(...refs.map((r) => r.r)), c: Math.max(...refs.map((r) => r.c)) },
  });
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, ws, 'Sheet1');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', ...options }) as Buffer;
}

describe('formula cells read as their cached result, whatever it is', () => {
  test('0, FALSE and "" results are values, not blanks (LibreOffice saves booleans as TRUE()/FALSE())', async () => {
    const file = sheetJs({
      A1: { t: 's', v: 'Zero' },
      B1: { t: 's', v: 'No' },
      C1: { t: 's', v: 'Blank' },
      D1: { t: 's', v: 'Yes' },
      A2: { t: 'n', v: 0, f: '1-1' },
      B2: { t: 'b', v: false, f: 'FALSE()' },
      C2: { t: 's', v: '', f: '""&""' },
      D2: { t: 'b', v: true, f: 'TRUE()' },
    });
    const r = await post(service(), file);
    expect(r.status).toBe(201);
    expect(r.json).toEqual([{ Zero: 0, No: false, Blank: '', Yes: true }]);
  });
});

describe('dates', () => {
  test('ISO date cells (t="d", SheetJS cellDates) read as ISO timestamps, not day counts', async () => {
    const file = sheetJs({ A1: { t: 's', v: 'Due' }, A2: { t: 'd', v: new Date(Date.UTC(2026, 2, 1)) } }, { cellDates: true });
    expect((await post(service(), file)).json).toEqual([{ Due: '2026-03-01T00:00:00.000Z' }]);
  });

  test('numbers with a date format read as ISO timestamps; plain numbers stay numbers', async () => {
    const file = sheetJs({
      A1: { t: 's', v: 'Due' },
      B1: { t: 's', v: 'Count' },
      A2: { t: 'n', v: 46082.5, z: 'yyyy-mm-dd hh:mm' },
      B2: { t: 'n', v: 46082.5 },
    });
    expect((await post(service(), file)).json).toEqual([{ Due: '2026-03-01T12:00:00.000Z', Count: 46082.5 }]);
  });
});

describe('text is unescaped exactly once', () => {
  test('formula strings (t="str") and shared strings keep &amp; and &lt;b&gt; as written', async () => {
    const file = sheetJs({
      A1: { t: 's', v: 'Text' },
      B1: { t: 's', v: 'Formula' },
      A2: { t: 's', v: 'a &amp; <b>' },
      B2: { t: 's', v: '&lt;b&gt;', f: '"&lt;b&gt;"' },
    });
    expect((await post(service(), file)).json).toEqual([{ Text: 'a &amp; <b>', Formula: '&lt;b&gt;' }]);
  });
});

describe('a workbook the service wrote comes back as the same entities', () => {
  const tricky: Entity[] = [
    {
      Id: 1,
      Text: '[1,2]',
      Json: [1, 2],
      Obj: { a: 1 },
      Nil: null,
      Empty: '',
      Esc: 'a &amp; b <c>',
      Ox: '_x0041_',
      Ctl: 'bell\u0007',
      Bool: false,
      Zero: 0,
    },
    { Id: 2, Text: '{"a":1}', Json: { b: [true, null] }, Nil: 'now text', Empty: 'x', Esc: '&lt;' },
    {},
    { Id: 4, Text: 'null', Json: [], Obj: null },
  ];

  test('strings that look like JSON stay strings; null, missing, empty strings, {} and escapes survive', async () => {
    const s = service();
    expect((await post(s, Buffer.from(JSON.stringify(tricky)), 'application/json')).status).toBe(201);
    const copy = service();
    const r = await post(copy, await exportExcel(s));
    expect(r.status).toBe(201);
    expect(r.json).toEqual(tricky);
    // The exact order of properties survives too.
    expect(r.json.map((e: Entity) => Object.keys(e))).toEqual(tricky.map((e) => Object.keys(e)));
  });

  test('a carriage return in text is written as _x000D_, which XML end-of-line handling cannot turn into LF', async () => {
    const s = service();
    const note = 'line one\r\nline two\rend';
    expect((await post(s, Buffer.from(JSON.stringify([{ Id: 1, Note: note }])), 'application/json')).status).toBe(201);
    const exported = await exportExcel(s);
    // A conformant XML parser (Excel, LibreOffice) reads CR LF and a lone CR in the file as LF
    // (XML 1.0, 2.11): so no raw CR may be in any part of the workbook.
    const entries = zipEntries(exported)!;
    for (const [name, entry] of entries)
      if (name.endsWith('.xml'))
        expect([name, (await readEntry(exported, entry, { remaining: 1 << 26 })).includes(0x0d)]).toEqual([name, false]);
    const wb = XLSX.read(exported, { type: 'buffer' });
    expect(XLSX.utils.sheet_to_json<Record<string, unknown>>(wb.Sheets[wb.SheetNames[0]])[0].Note).toBe(note);
    expect((await post(service(), exported)).json[0].Note).toBe(note);
  });

  test('an export edited so that it no longer fits its types record is read by the plain rules', async () => {
    const s = service();
    await post(s, Buffer.from(JSON.stringify([{ A: '[1]', B: null }, { A: 'x' }])), 'application/json');
    const wb = XLSX.read(await exportExcel(s), { type: 'buffer' });
    // A person renames the header of column B: the record names B, so it no longer applies.
    wb.Sheets.Data.B1 = { t: 's', v: 'Renamed' };
    const edited = XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
    expect((await post(service(), edited)).json).toEqual([{ A: [1] }, { A: 'x' }]);
  });

  test('the types sheet is very hidden: SheetJS sees it hidden, and it is not the sheet that is read', async () => {
    const s = service();
    await post(s, Buffer.from(JSON.stringify([{ A: null }])), 'application/json');
    const wb = XLSX.read(await exportExcel(s), { type: 'buffer' });
    expect(wb.SheetNames).toEqual(['Data', 'Resourcery.Types']);
    expect(wb.Workbook?.Sheets?.map((x) => x.Hidden)).toEqual([0, 2]);
  });
});

describe('committed workbooks saved by independent programs', () => {
  const expected = [
    { Id: 1, Name: 'Ada & <Bob>', Active: true, Score: 0, Tags: ['a', 'b'], Note: '[1,2]', Extra: null },
    { Id: 2, Name: '02139', Active: false, Score: 1.5, Tags: [], Note: '{"a":1}', Address: { City: 'Zürich' } },
    { Id: 3, Name: '', Active: false, Score: -2, Tags: null, Note: 'plain &amp; text' },
  ];

  test('service.xlsx (the service export the others are made from) reads exactly', async () => {
    expect((await post(service(), readFileSync(join(FIXTURES, 'service.xlsx')))).json).toEqual(expected);
  });

  test('libreoffice.xlsx: the export re-saved by LibreOffice Calc (booleans as formulas, shared strings, empty cells dropped) reads exactly', async () => {
    expect((await post(service(), readFileSync(join(FIXTURES, 'libreoffice.xlsx')))).json).toEqual(expected);
  });

  test('openpyxl.xlsx: inline strings, date-formatted numbers, blanks, and a hidden first sheet that is skipped', async () => {
    expect((await post(service(), readFileSync(join(FIXTURES, 'openpyxl.xlsx')))).json).toEqual([
      { Name: 'Ada & <Bob>', Age: 36, Member: true, Joined: '2026-03-01T12:30:00.000Z', Tags: ['a', 'b'] },
      { Name: '02139', Age: 0, Member: false, Joined: '1999-12-31T00:00:00.000Z', Tags: 'plain' },
      { Name: 'Zoë', Age: 1.5, Note: 'Zürich, 8000' },
    ]);
  });
});

describe('formats that are not .xlsx say so', () => {
  test('an OpenDocument spreadsheet (.ods) is 415 with a message naming the format', async () => {
    const ods = storedZip([
      { name: 'mimetype', data: 'application/vnd.oasis.opendocument.spreadsheet' },
      { name: 'content.xml', data: '<x/>' },
    ]);
    const r = await post(service(), ods);
    expect(r.status).toBe(415);
    expect(r.json.ErrorCode).toBe('UnsupportedContent');
    expect(r.json.Message).toMatch(/OpenDocument spreadsheets \(\.ods\) are not supported/);
  });

  test('a legacy .xls workbook is 415 with a message naming the format', async () => {
    const xls = XLSX.write(withSheet(), { type: 'buffer', bookType: 'xls' }) as Buffer;
    const r = await post(service(), xls);
    expect(r.status).toBe(415);
    expect(r.json.Message).toMatch(/\.xls\) are not supported/);
  });

  test('Content-Type application/vnd.oasis.opendocument.spreadsheet is 415 naming the format', async () => {
    const r = await post(service(), Buffer.from('x'), 'application/vnd.oasis.opendocument.spreadsheet');
    expect(r.status).toBe(415);
    expect(r.json.Message).toMatch(/OpenDocument/);
  });
});

function withSheet(): XLSX.WorkBook {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet([['A'], [1]]), 'S');
  return wb;
}
