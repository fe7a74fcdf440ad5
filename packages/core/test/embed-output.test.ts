import * as XLSX from 'xlsx';
import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { EXCEL, readBody } from './content-types-support';
import { call, RAW } from './handle-support';

/** Embedded values in Excel and JSON Lines output (docs/relations.md#embed): nested values, as any nested value. */

function shop(): Service {
  const s = createService();
  s.addResource({
    name: 'Customer',
    key: 'Id',
    storage: new MemoryStorage([
      { Id: 1, Name: 'Ann' },
      { Id: 2, Name: 'Bo' },
      { Id: 3, Name: 'Cy' },
    ]),
    relations: { Orders: { toMany: 'Order', via: 'CustomerId' } },
  });
  s.addResource({
    name: 'Order',
    key: 'Id',
    storage: new MemoryStorage([
      { Id: 11, CustomerId: 1, Total: 200 },
      { Id: 12, CustomerId: 2, Total: 80 },
      { Id: 13, CustomerId: 1, Total: 50 },
      { Id: 14, CustomerId: 9, Total: 5 },
    ]),
    relations: { Customer: { toOne: 'Customer', via: 'CustomerId' } },
  });
  return s;
}

async function excelRows(s: Service, uri: string): Promise<unknown[][]> {
  const r = await s.handle({ method: 'GET', uri, headers: { accept: EXCEL } });
  expect(r.status).toBe(200);
  const book = XLSX.read((await readBody(r.body)).bytes, { type: 'buffer' });
  // The second sheet (hidden) records the cells' types for reading the workbook back (docs/content-types.md).
  expect(book.SheetNames[0]).toBe('Data');
  return XLSX.utils.sheet_to_json(book.Sheets.Data, { header: 1, defval: null });
}

describe('embed through Excel (read back with SheetJS)', () => {
  test('a to-many relation is a cell of JSON text, an array; [] when there are none', async () => {
    const s = shop();
    const rows = await excelRows(s, '/Customer/_/embed=Orders');
    const json = (await call(s, 'GET', '/Customer/_/embed=Orders', { headers: RAW })).json;
    expect(rows[0]).toEqual(['Id', 'Name', 'Orders']);
    expect(rows.slice(1)).toEqual(json.map((c: { Id: number; Name: string; Orders: unknown }) => [c.Id, c.Name, JSON.stringify(c.Orders)]));
    expect(rows[3]).toEqual([3, 'Cy', '[]']);
  });

  test('a to-one relation is a cell of JSON text, an object; an empty cell for null; dotted values are plain cells', async () => {
    const s = shop();
    const rows = await excelRows(s, '/Order/_/embed=Customer&order_asc=Id');
    expect(rows[0]).toEqual(['Id', 'CustomerId', 'Total', 'Customer']);
    expect(rows[1]).toEqual([11, 1, 200, '{"Id":1,"Name":"Ann"}']);
    expect(rows[4]).toEqual([14, 9, 5, null]);
    const selected = await excelRows(s, '/Order/_/embed=Customer&select=Id,Customer.Name&order_asc=Id');
    expect(selected).toEqual([
      ['Id', 'Customer.Name'],
      [11, 'Ann'],
      [12, 'Bo'],
      [13, 'Ann'],
      [14, null],
    ]);
  });
});

describe('embed through JSON Lines', () => {
  test('one line per entity, the embedded values nested in it as in the JSON answer', async () => {
    const s = shop();
    for (const uri of ['/Customer/_/embed=Orders', '/Order/_/embed=Customer', '/Customer/1/embed=Orders&select=Name,Orders']) {
      const lines = await call(s, 'GET', uri, { headers: { accept: 'application/jsonlines' } });
      expect(lines.status).toBe(200);
      expect(lines.headers['content-type']).toBe('application/jsonlines');
      const parsed = lines.text
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l));
      expect({ uri, parsed }).toEqual({ uri, parsed: (await call(s, 'GET', uri, { headers: RAW })).json });
    }
    const first = (await call(s, 'GET', '/Customer/1/embed=Orders', { headers: { accept: 'application/jsonlines' } })).text;
    expect(first).toBe('{"Id":1,"Name":"Ann","Orders":[{"Id":11,"CustomerId":1,"Total":200},{"Id":13,"CustomerId":1,"Total":50}]}\n');
  });
});
