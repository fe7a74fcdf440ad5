import * as XLSX from 'xlsx';
import { createService, type Service } from '@resourcery/core';
import { call, RAW } from './handle-support';

/**
 * exceljs is an optional peer dependency (docs/install.md#excel-output). Here it is absent: its
 * require fails exactly as Node's does for a package that is not installed. (pack-check
 * runs the same against the packed core installed without it.)
 */
jest.mock('exceljs', () => {
  throw Object.assign(new Error("Cannot find module 'exceljs' from 'packages/core/src/content-types/excel-stream.ts'"), {
    code: 'MODULE_NOT_FOUND',
  });
});

const EXCEL = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

function service(): Service {
  const s = createService();
  s.addResource({ name: 'Item' });
  return s;
}

function workbook(rows: unknown[][]): Buffer {
  const wb = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), 'Sheet1');
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Buffer;
}

describe('without exceljs installed', () => {
  test('asking for Excel is 406 naming the package; JSON answers as before', async () => {
    const s = service();
    expect((await call(s, 'POST', '/Item', { body: [{ Name: 'a' }] })).status).toBe(201);
    for (const accept of [EXCEL, 'excel', 'application/service-excel']) {
      const r = await call(s, 'GET', '/Item', { headers: { accept } });
      expect(r.status).toBe(406);
      expect(r.json.Message).toMatch(/exceljs/);
      expect(r.json.Message).toMatch(/npm install exceljs/);
    }
    expect((await call(s, 'GET', '/Item', { headers: RAW })).json).toEqual([{ Name: 'a' }]);
  });

  test('a write answered in Excel is refused before it is made', async () => {
    const s = service();
    const r = await call(s, 'POST', '/Item', { body: [{ Name: 'b' }], headers: { 'content-type': 'application/json', accept: 'excel' } });
    expect(r.status).toBe(406);
    expect((await call(s, 'GET', '/Item', { headers: RAW })).status).toBe(204);
  });

  test('Excel bodies are still read (the reader is the service own, not exceljs)', async () => {
    const s = service();
    const body = workbook([
      ['Name', 'Age'],
      ['ann', 31],
    ]);
    const r = await s.handle({ method: 'POST', uri: '/Item', headers: { 'content-type': EXCEL, ...RAW }, body });
    expect(r.status).toBe(201);
    expect((await call(s, 'GET', '/Item', { headers: RAW })).json).toEqual([{ Name: 'ann', Age: 31 }]);
  });
});
