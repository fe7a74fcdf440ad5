import ExcelJS from 'exceljs';
import { crc32, deflateRawSync } from 'node:zlib';
import type { PlainResponse } from '@resourcery/core';

/** Helpers for the content-type tests: whole bodies as bytes, workbooks as plain rows. */

export const EXCEL = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export interface Body {
  bytes: Buffer;
  /** How many chunks the body came in (1 for a string or a buffer). */
  chunks: number;
  streamed: boolean;
}

export async function readBody(body: PlainResponse['body']): Promise<Body> {
  if (body === null) return { bytes: Buffer.alloc(0), chunks: 0, streamed: false };
  if (typeof body === 'string' || body instanceof Uint8Array) return { bytes: Buffer.from(body), chunks: 1, streamed: false };
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return { bytes: Buffer.concat(parts), chunks: parts.length, streamed: true };
}

export interface Sheet {
  name: string;
  /** Cell values by row, column 1 first; rows and cells that are empty are undefined. */
  rows: unknown[][];
  /** exceljs ValueType of each cell (0 Null, 2 Number, 3 String, 8 RichText, 9 Boolean). */
  types: number[][];
}

export async function readSheets(bytes: Uint8Array): Promise<Sheet[]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  // The very hidden types sheet is for readers, not people: tests look at what people see.
  return workbook.worksheets
    .filter((ws) => ws.state !== 'veryHidden')
    .map((ws) => {
      const rows: unknown[][] = [];
      const types: number[][] = [];
      ws.eachRow((row, r) => {
        rows[r - 1] = [];
        types[r - 1] = [];
        row.eachCell({ includeEmpty: true }, (cell, c) => {
          rows[r - 1][c - 1] = cell.value ?? undefined;
          types[r - 1][c - 1] = cell.type;
        });
      });
      return { name: ws.name, rows, types };
    });
}

/** A workbook made the way a spreadsheet program would: one sheet per entry, rows of cell values. */
export async function workbookOf(sheets: Record<string, ExcelJS.CellValue[][]>): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) {
    const ws = workbook.addWorksheet(name);
    rows.forEach((values, r) =>
      values.forEach((value, c) => {
        if (value !== undefined) ws.getCell(r + 1, c + 1).value = value;
      }),
    );
  }
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/** A ZIP of stored (uncompressed) files; `declaredSize` makes the central directory claim another size. */
export function storedZip(files: Array<{ name: string; data: string }>, declaredSize?: number): Buffer {
  return zipOf(files, { deflate: false, declaredSize });
}

/** A ZIP of deflated files; `declaredSize` makes both headers claim another unpacked size. */
export function deflatedZip(files: Array<{ name: string; data: Buffer }>, declaredSize?: number): Buffer {
  return zipOf(files, { deflate: true, declaredSize });
}

function zipOf(files: Array<{ name: string; data: string | Buffer }>, options: { deflate: boolean; declaredSize?: number }): Buffer {
  const locals: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name);
    const data = Buffer.from(file.data);
    const packed = options.deflate ? deflateRawSync(data) : data;
    const method = options.deflate ? 8 : 0;
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(method, 8);
    header.writeUInt32LE(crc32(data), 14);
    header.writeUInt32LE(packed.length, 18);
    header.writeUInt32LE(options.deflate ? (options.declaredSize ?? data.length) : data.length, 22);
    header.writeUInt16LE(name.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(method, 10);
    entry.writeUInt32LE(crc32(data), 16);
    entry.writeUInt32LE(packed.length, 20);
    entry.writeUInt32LE(options.declaredSize ?? data.length, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(header, name, packed);
    directory.push(entry, name);
    offset += header.length + name.length + packed.length;
  }
  const dir = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}
