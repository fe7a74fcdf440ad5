import type { CellValue } from 'exceljs';
import { ServiceError } from '../errors.js';
import type { Entity } from '../query/conditions.js';
import type { Result } from '../results.js';
import type { ContentType } from './content-type.js';
import { loadExcelJs, streamWorkbook, type SheetSource } from './excel-stream.js';
import { propertyNames, resultSummary } from './tables.js';
import { declaredUnzippedSize } from './zip-size.js';

/**
 * Largest unpacked workbook read (sum of the ZIP's entries). exceljs holds a whole
 * workbook in memory at ten to fifteen times its XML size, so this bounds a request's memory.
 */
export const MAX_UNZIPPED_WORKBOOK = 64 * 1024 * 1024;

/**
 * Spreadsheet (Excel format), written and read with exceljs. Entities are rows under a
 * header row holding the union of their property names, in first-seen order.
 */
export const excel: ContentType = {
  name: 'Spreadsheet (Excel format)',
  mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  bindings: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/service-excel', 'excel'],
  extension: 'xlsx',
  read: readWorkbook,
  write: (result) => streamWorkbook(sheetsOf(result)),
};

/**
 * GET: one sheet "Data". Changes: "Data" (the written entities, as the JSON envelope's
 * Data) and "Summary" (one row of its counts). REPORT: "Summary" with one Count.
 */
function sheetsOf(result: Result): SheetSource[] {
  switch (result.kind) {
    case 'entities': return [{ name: 'Data', rows: tableRows(result.entities) }];
    case 'change': return [{ name: 'Data', rows: tableRows(result.data) }, { name: 'Summary', rows: tableRows([resultSummary(result)]) }];
    default: return [{ name: 'Summary', rows: tableRows([resultSummary(result)]) }];
  }
}

function* tableRows(entities: readonly Entity[]): Generator<unknown[]> {
  if (entities.length === 0) return;
  const names = propertyNames(entities);
  yield row(names.map(toCell));
  for (const entity of entities) yield row(names.map((name) => toCell(entity[name])));
}

/** Index 0 is never set, so exceljs reads index n as column n (see its Row.values). */
function row(cells: Array<CellValue | undefined>): unknown[] {
  const values: unknown[] = new Array(cells.length + 1);
  for (let i = 0; i < cells.length; i++) if (cells[i] !== undefined) values[i + 1] = cells[i];
  return values;
}

/**
 * One property value as a cell. Strings stay text (so "02139" is not a number); nested
 * values are JSON text; null and missing are empty cells. An empty string is written as
 * (empty) rich text, because an empty plain-text cell reads back as no value at all.
 */
export function toCell(value: unknown): CellValue | undefined {
  switch (typeof value) {
    case 'string': return value === '' ? { richText: [{ text: '' }] } : value;
    case 'number': return Number.isFinite(value) ? value : undefined;
    case 'boolean': return value;
    case 'bigint': return String(value);
    case 'object':
      if (value === null) return undefined;
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
      return JSON.stringify(value);
    default: return undefined;
  }
}

/**
 * One cell as a property value, or undefined for no value (the property is left out, so
 * a blank optional column passes a schema that does not allow null). Text holding a JSON
 * object or array, as toCell writes nested values, becomes that value again.
 */
export function fromCell(value: CellValue): unknown {
  if (value === null || value === undefined) return undefined;
  switch (typeof value) {
    case 'string': return fromText(value);
    case 'number':
    case 'boolean': return value;
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  if ('richText' in value) return fromText(value.richText.map((r) => r.text).join(''));
  if ('hyperlink' in value) return fromCell(value.text as CellValue);
  if ('formula' in value || 'sharedFormula' in value) return fromCell(value.result as CellValue);
  return undefined; // an error value such as #N/A
}

function fromText(text: string): unknown {
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  // Only `{...}` and `[...]` are candidates: "02139", "true" or "null" stay strings.
  if (!((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d))) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function failed(message: string): ServiceError {
  return new ServiceError('FailedExcelRead', message);
}

/** The first sheet: row 1 names the properties, every later non-empty row is one entity. */
async function readWorkbook(body: Uint8Array): Promise<Entity[]> {
  const size = declaredUnzippedSize(body);
  if (size === null) throw failed('The body is not an Excel workbook (.xlsx): it is not a ZIP file');
  if (size > MAX_UNZIPPED_WORKBOOK) {
    throw new ServiceError('PayloadTooLarge', `The workbook unpacks to more than ${MAX_UNZIPPED_WORKBOOK} bytes, the limit for spreadsheets`);
  }
  const ExcelJS = await loadExcelJs();
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.load(body as unknown as ArrayBuffer);
  } catch (e) {
    throw failed(`The body is not a readable Excel workbook (.xlsx): ${e instanceof Error ? e.message : String(e)}`);
  }
  const sheet = workbook.worksheets[0];
  if (!sheet) throw failed('The workbook has no sheets');
  const names: Array<string | undefined> = [];
  const seen = new Set<string>();
  sheet.getRow(1).eachCell((cell, column) => {
    const name = fromCell(cell.value);
    if (name === undefined) return;
    const text = typeof name === 'string' ? name : JSON.stringify(name);
    if (seen.has(text)) throw failed(`Column ${cell.address.replace(/\d+$/, '')} repeats the property name '${text}' of an earlier column in row 1`);
    seen.add(text);
    names[column] = text;
  });
  const entities: Entity[] = [];
  sheet.eachRow((row, number) => {
    if (number === 1) return;
    const entity: Entity = {};
    let empty = true;
    row.eachCell((cell, column) => {
      const value = fromCell(cell.value);
      if (value === undefined) return;
      const name = names[column];
      if (name === undefined) throw failed(`Cell ${cell.address} holds a value, but its column has no property name in row 1`);
      entity[name] = value;
      empty = false;
    });
    if (!empty) entities.push(entity);
  });
  return entities;
}
