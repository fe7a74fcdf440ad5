import type { CellValue } from 'exceljs';
import { ServiceError } from '../errors.js';
import type { Entity } from '../query/conditions.js';
import type { Result } from '../operations/results.js';
import type { ContentType } from './content-type.js';
import { prepareExcel, streamWorkbook, type SheetSource } from './excel-stream.js';
import { inRanges, readTypes, TYPES_SHEET, TypesRecorder, type ColumnTypes, type SheetTypes } from './excel-types.js';
import { propertyNames, resultSummary } from './tables.js';
import { openWorkbook, WorkbookError, type Cell, type SheetRow } from './workbook-reader.js';
import { escapeCellText } from './xml-text.js';
import { nextTurn } from '../util/turn.js';

/** Largest unpacked workbook read: the bytes actually inflated from the parts read, which bounds a request's memory. */
const MAX_UNZIPPED_WORKBOOK = 64 * 1024 * 1024;

/**
 * Spreadsheet (Excel format), written with exceljs (an optional peer dependency, loaded
 * on first use: docs/install.md#excel-output) and read by workbook-reader.ts. Entities are rows
 * under a header row holding the union of their property names, in first-seen order.
 */
export const excel: ContentType = {
  name: 'Spreadsheet (Excel format)',
  mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  bindings: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'application/service-excel', 'excel'],
  extension: 'xlsx',
  read: readWorkbook,
  write: (result) => streamWorkbook(sheetsOf(result)),
  prepare: prepareExcel,
};

/**
 * GET: one sheet "Data". Changes: "Data" (the written entities, as the JSON envelope's
 * Data) and "Summary" (one row of its counts). REPORT: "Summary" with one Count.
 */
function sheetsOf(result: Result): SheetSource[] {
  const types = new TypesRecorder();
  const sheet = (name: string, entities: readonly Entity[]): SheetSource => ({
    name,
    rows: tableRows(entities, types.sheet(name, propertyNames(entities))),
  });
  const sheets =
    result.kind === 'entities'
      ? [sheet('Data', result.entities)]
      : result.kind === 'change'
        ? [sheet('Data', result.data), sheet('Summary', [resultSummary(result)])]
        : [sheet('Summary', [resultSummary(result)])];
  // Rows are made while the sheets above are written, so the record is complete when this sheet is.
  return [...sheets, { name: TYPES_SHEET, state: 'veryHidden', rows: types.rows() }];
}

function* tableRows(entities: readonly Entity[], record: (row: number, column: number, value: unknown) => void): Generator<unknown[]> {
  if (entities.length === 0) return;
  const names = propertyNames(entities);
  yield row(names.map(toCell));
  for (let i = 0; i < entities.length; i++) {
    const entity = entities[i];
    yield row(
      names.map((name, c) => {
        const value = entity[name];
        record(i + 2, c + 1, value);
        return toCell(value);
      }),
    );
  }
}

/** Index 0 is never set, so exceljs reads index n as column n (see its Row.values). */
function row(cells: Array<CellValue | undefined>): unknown[] {
  const values: unknown[] = new Array(cells.length + 1);
  for (let i = 0; i < cells.length; i++) if (cells[i] !== undefined) values[i + 1] = cells[i];
  return values;
}

/**
 * One property value as a cell. Strings stay text (so "02139" is not a number), escaped
 * so that readers give the same text back; nested values are JSON text; null and missing
 * are empty cells (the types sheet tells them apart). An empty string is written as
 * (empty) rich text, because an empty plain-text cell reads back as no value at all.
 */
function toCell(value: unknown): CellValue | undefined {
  switch (typeof value) {
    case 'string':
      return value === '' ? { richText: [{ text: '' }] } : escapeCellText(value);
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    case 'boolean':
      return value;
    case 'bigint':
      return String(value);
    case 'object':
      if (value === null) return undefined;
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
      return escapeCellText(JSON.stringify(value));
    default:
      return undefined;
  }
}

function failed(message: string): ServiceError {
  return new ServiceError('FailedExcelRead', message);
}

function readError(e: unknown): unknown {
  if (!(e instanceof WorkbookError)) return e;
  if (e.kind === 'too-large') return new ServiceError('PayloadTooLarge', e.message);
  if (e.kind === 'unsupported') return new ServiceError('UnsupportedContent', e.message);
  return failed(e.message);
}

/**
 * The first visible sheet: row 1 names the properties, every later row is one entity.
 * With a types sheet that still fits (a workbook the service wrote), values come back
 * exactly; otherwise text that holds a JSON object or array becomes that value, and
 * empty cells and rows are left out.
 */
async function readWorkbook(body: Uint8Array): Promise<Entity[]> {
  try {
    const sheets = await openWorkbook(body, MAX_UNZIPPED_WORKBOOK);
    const data = sheets.find((s) => !s.hidden) ?? sheets[0];
    if (data === undefined) throw failed('The workbook has no sheets');
    const rows = await data.rows();
    const names = headerNames(rows[0]?.number === 1 ? rows[0].cells : []);
    const typesSheet = sheets.find((s) => s.hidden && s.name === TYPES_SHEET);
    const recorded = typesSheet === undefined ? undefined : readTypes(await typesSheet.rows())?.get(data.name);
    const exact = recorded === undefined ? undefined : await exactEntities(rows, names, recorded);
    return exact ?? (await guessedEntities(rows, names));
  } catch (e) {
    throw readError(e);
  }
}

function columnName(column: number): string {
  let name = '';
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

function headerNames(cells: readonly Cell[]): Array<string | undefined> {
  const names: Array<string | undefined> = [];
  const seen = new Set<string>();
  for (const cell of cells) {
    const text = String(cell.value);
    if (seen.has(text)) throw failed(`Column ${columnName(cell.column)} repeats the property name '${text}' of an earlier column in row 1`);
    seen.add(text);
    names[cell.column] = text;
  }
  return names;
}

function nameOf(names: Array<string | undefined>, cell: Cell, row: number): string {
  const name = names[cell.column];
  if (name === undefined) throw failed(`Cell ${columnName(cell.column)}${row} holds a value, but its column has no property name in row 1`);
  return name;
}

/** Rows made into entities between two turns of the event loop (docs/limits.md#large-work). */
const ROWS_PER_TURN = 1000;

async function guessedEntities(rows: readonly SheetRow[], names: Array<string | undefined>): Promise<Entity[]> {
  const entities: Entity[] = [];
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % ROWS_PER_TURN === 0) await nextTurn();
    const row = rows[i];
    if (row.number === 1) continue;
    const entity: Entity = {};
    for (const cell of row.cells) entity[nameOf(names, cell, row.number)] = cell.text ? fromText(cell.value as string) : cell.value;
    entities.push(entity);
  }
  return entities;
}

/** Text holding a JSON object or array, as toCell writes nested values; "02139", "true" or "null" stay strings. */
function fromText(text: string): unknown {
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  if (!((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d))) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Entities exactly as written, or undefined when the sheet no longer fits its record (edited since). */
async function exactEntities(
  rows: readonly SheetRow[],
  names: Array<string | undefined>,
  types: SheetTypes,
): Promise<Entity[] | undefined> {
  for (const [column, col] of types.columns) if (names[column] !== col.property) return undefined;
  const found: Array<Map<number, Cell> | undefined> = [];
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % ROWS_PER_TURN === 0) await nextTurn();
    const row = rows[i];
    if (row.number === 1) continue;
    if (row.number - 1 > types.rows) return undefined;
    found[row.number] = new Map(row.cells.map((c) => [c.column, c]));
  }
  const entities: Entity[] = [];
  for (let number = 2; number <= types.rows + 1; number++) {
    if (number % ROWS_PER_TURN === 0) await nextTurn();
    const cells = found[number];
    const entity: Entity = {};
    for (let column = 1; column < names.length; column++) {
      const cell = cells?.get(column);
      const value = exactValue(cell, types.columns.get(column), number);
      if (value === INVALID) return undefined;
      if (value !== undefined) entity[nameOf(names, cell ?? { column, value: '', text: true }, number)] = value;
    }
    for (const column of cells?.keys() ?? []) if (column >= names.length) nameOf(names, cells!.get(column)!, number);
    entities.push(entity);
  }
  return entities;
}

const INVALID = Symbol('invalid');

/** One cell's value by its column's record; INVALID when the cell contradicts it. */
function exactValue(cell: Cell | undefined, column: ColumnTypes | undefined, row: number): unknown {
  if (column !== undefined) {
    if (inRanges(column.nulls, row)) return cell === undefined ? null : INVALID;
    if (inRanges(column.empty, row)) return cell === undefined || cell.value === '' ? '' : INVALID;
    if (inRanges(column.json, row)) {
      const value = cell?.text ? fromText(cell.value as string) : undefined;
      return value !== null && typeof value === 'object' ? value : INVALID;
    }
  }
  return cell?.value;
}
