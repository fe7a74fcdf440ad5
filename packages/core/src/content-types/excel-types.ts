/**
 * What a cell alone cannot say about the JSON value it came from: text holding a JSON
 * object or array versus a string that looks like one, and null versus a missing
 * property (both empty cells), and empty strings (which some editors, LibreOffice among
 * them, save as no cell at all). The writer records these per column in a very hidden
 * sheet; the reader uses it when it still fits the data sheet, so a workbook the service
 * wrote comes back as the same entities (docs/content-types.md).
 *
 * Sheet `Resourcery.Types`, row 1 a header, then one row per (sheet, column):
 * Sheet | Column | Property | Rows | Json | Null | Empty. Column 0 gives the sheet's entity
 * count (Rows). Json, Null and Empty list sheet row numbers as ranges (`2-9,12`); a list longer than a
 * cell holds continues in further rows for the same column.
 */
import type { Cell } from './workbook-reader.js';

export const TYPES_SHEET = 'Resourcery.Types';
const HEADER = ['Sheet', 'Column', 'Property', 'Rows', 'Json', 'Null', 'Empty'];
/** Excel's limit is 32,767 characters per cell. */
const MAX_CELL_TEXT = 30_000;

/** Row numbers in increasing order, kept as ranges. */
class Ranges {
  readonly pairs: number[] = [];

  add(n: number): void {
    const p = this.pairs;
    if (p.length > 0 && p[p.length - 1] === n - 1) p[p.length - 1] = n;
    else p.push(n, n);
  }

  chunks(): string[] {
    const out: string[] = [];
    let text = '';
    for (let i = 0; i < this.pairs.length; i += 2) {
      const a = this.pairs[i];
      const b = this.pairs[i + 1];
      const item = a === b ? String(a) : `${a}-${b}`;
      if (text.length + item.length + 1 > MAX_CELL_TEXT) {
        out.push(text);
        text = '';
      }
      text = text === '' ? item : `${text},${item}`;
    }
    if (text !== '') out.push(text);
    return out;
  }
}

interface RecordedColumn {
  property: string;
  json: Ranges;
  nulls: Ranges;
  empty: Ranges;
}

/** Collects, while a sheet is written, the cells whose JSON type the cell does not show. */
export class TypesRecorder {
  private readonly sheets: Array<{ name: string; rows: number; columns: Map<number, RecordedColumn> }> = [];

  /** Starts a sheet; returns a function to call for every value written at (row, column). */
  sheet(name: string, names: readonly string[]): (row: number, column: number, value: unknown) => void {
    const entry = { name, rows: 0, columns: new Map<number, RecordedColumn>() };
    this.sheets.push(entry);
    const column = (c: number) => {
      let col = entry.columns.get(c);
      if (col === undefined)
        entry.columns.set(c, (col = { property: names[c - 1], json: new Ranges(), nulls: new Ranges(), empty: new Ranges() }));
      return col;
    };
    return (row, c, value) => {
      if (row - 1 > entry.rows) entry.rows = row - 1;
      if (value === null) column(c).nulls.add(row);
      else if (value === '') column(c).empty.add(row);
      else if (typeof value === 'object' && !(value instanceof Date)) column(c).json.add(row);
    };
  }

  /** The rows of the types sheet. */
  *rows(): Generator<unknown[]> {
    yield cells(HEADER);
    for (const sheet of this.sheets) {
      yield cells([sheet.name, 0, '', sheet.rows]);
      for (const [c, col] of sheet.columns) {
        const lists = [col.json.chunks(), col.nulls.chunks(), col.empty.chunks()];
        const count = Math.max(...lists.map((l) => l.length));
        for (let i = 0; i < count; i++) yield cells([sheet.name, c, col.property, sheet.rows, ...lists.map((l) => l[i] ?? '')]);
      }
    }
  }
}

/** exceljs row values: column n at index n, index 0 a hole (an explicit undefined there shifts every cell right). */
function cells(values: readonly unknown[]): unknown[] {
  const row: unknown[] = new Array(values.length + 1);
  for (let i = 0; i < values.length; i++) row[i + 1] = values[i];
  return row;
}

/** One column's record: row ranges as [a0, b0, a1, b1, ...]. */
export interface ColumnTypes {
  property: string;
  json: number[];
  nulls: number[];
  empty: number[];
}

export interface SheetTypes {
  rows: number;
  columns: Map<number, ColumnTypes>;
}

/** The recorded types per sheet name, from the types sheet's rows; malformed rows make the whole record unusable (null). */
export function readTypes(rows: ReadonlyArray<{ number: number; cells: readonly Cell[] }>): Map<string, SheetTypes> | null {
  const out = new Map<string, SheetTypes>();
  for (const row of rows) {
    if (row.number === 1) continue;
    const v: unknown[] = [];
    for (const cell of row.cells) v[cell.column] = cell.value;
    const [sheet, column, property, count] = [v[1], v[2], v[3] ?? '', v[4]];
    const [json, nulls, empty] = [rangesText(v[5]), rangesText(v[6]), rangesText(v[7])];
    if (json === null || nulls === null || empty === null) return null;
    if (typeof sheet !== 'string' || !Number.isInteger(column) || !Number.isInteger(count) || typeof property !== 'string') return null;
    let entry = out.get(sheet);
    if (entry === undefined) out.set(sheet, (entry = { rows: count as number, columns: new Map() }));
    if (column === 0) continue;
    let col = entry.columns.get(column as number);
    if (col === undefined) entry.columns.set(column as number, (col = { property, json: [], nulls: [], empty: [] }));
    if (!parseRanges(json, col.json) || !parseRanges(nulls, col.nulls) || !parseRanges(empty, col.empty)) return null;
  }
  return out;
}

/** A ranges cell's text: written as text, a number once a spreadsheet retyped it; anything else is malformed. */
function rangesText(value: unknown): string | null {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
}

function parseRanges(text: string, into: number[]): boolean {
  if (text === '') return true;
  for (const item of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(item);
    if (m === null) return false;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || (into.length > 0 && a <= into[into.length - 1])) return false;
    into.push(a, b);
  }
  return true;
}

/** Whether row n lies in ranges [a0, b0, a1, b1, ...] (increasing). */
export function inRanges(pairs: readonly number[], n: number): boolean {
  let lo = 0;
  let hi = pairs.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (n < pairs[2 * mid]) hi = mid - 1;
    else if (n > pairs[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}
