/**
 * Reads the cells of an .xlsx workbook (Office Open XML, ECMA-376) without exceljs: every
 * cell type (shared, inline and formula strings, booleans, errors, ISO `t="d"` dates,
 * numbers with date formats), cached formula results whatever their value, and text
 * unescaped exactly once. Bounded by the bytes actually unpacked.
 */
import { attributes, cellText, elements, runText, unescapeXml } from './xml-text.js';
import { readEntry, readEntryPieces, zipEntries, ZipError, type InflateBudget, type ZipEntry } from './zip.js';
import { nextTurn } from '../util/turn.js';

/** A cell's value: text (string cells), a number, a boolean, or a date as ISO text. */
export interface Cell {
  column: number;
  value: string | number | boolean;
  /** true for string cells (which may hold JSON); false for dates, numbers, booleans. */
  text: boolean;
}

export interface SheetRow {
  number: number;
  cells: Cell[];
}

export interface Sheet {
  name: string;
  hidden: boolean;
  /** Reads the sheet's rows (only non-empty cells). */
  rows(): Promise<SheetRow[]>;
}

export class WorkbookError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreadable' | 'too-large' | 'unsupported',
  ) {
    super(message);
  }
}

const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/** The workbook's sheets in tab order. */
export async function openWorkbook(body: Uint8Array, maxUnpackedBytes: number): Promise<Sheet[]> {
  const entries = zipEntries(body);
  if (entries === null) {
    if (OLE_MAGIC.every((b, i) => body[i] === b)) {
      throw new WorkbookError(
        'Legacy Excel 97-2003 workbooks (.xls) are not supported: save the file as an Excel workbook (.xlsx)',
        'unsupported',
      );
    }
    throw new WorkbookError('The body is not an Excel workbook (.xlsx): it is not a ZIP file', 'unreadable');
  }
  const budget: InflateBudget = { remaining: maxUnpackedBytes };
  const parts: Map<string, ZipEntry> = entries;
  // A part's text; a sheet's in pieces (pieces: true), which may be megabytes of it.
  async function read(path: string): Promise<string | null>;
  async function read(path: string, pieces: true): Promise<Buffer[] | null>;
  async function read(path: string, pieces?: true): Promise<string | Buffer[] | null> {
    const entry: ZipEntry | undefined = parts.get(path.toLowerCase());
    if (!entry) return null;
    try {
      if (pieces) return await readEntryPieces(body, entry, budget);
      return (await readEntry(body, entry, budget)).toString('utf8');
    } catch (e) {
      if (e instanceof ZipError)
        throw new WorkbookError(
          e.tooLarge ? `The workbook unpacks to more than ${maxUnpackedBytes} bytes, the limit for spreadsheets` : e.message,
          e.tooLarge ? 'too-large' : 'unreadable',
        );
      throw e;
    }
  }
  const mimetype = entries.has('mimetype') ? await read('mimetype') : null;
  if (mimetype !== null && mimetype.includes('opendocument')) {
    throw new WorkbookError(
      'OpenDocument spreadsheets (.ods) are not supported: save the file as an Excel workbook (.xlsx)',
      'unsupported',
    );
  }
  const workbookPath = target('', relationships(await read('_rels/.rels')), '/officeDocument') ?? 'xl/workbook.xml';
  const workbook = await read(workbookPath);
  if (workbook === null) throw new WorkbookError('The body is not an Excel workbook (.xlsx): it has no workbook part', 'unreadable');
  const folder = workbookPath.slice(0, workbookPath.lastIndexOf('/') + 1);
  const rels = relationships(await read(`${folder}_rels/${workbookPath.slice(folder.length)}.rels`));
  const strings = sharedStrings(await read(target(folder, rels, '/sharedStrings') ?? `${folder}sharedStrings.xml`));
  const styles = dateStyles(await read(target(folder, rels, '/styles') ?? `${folder}styles.xml`));
  const date1904 = /<(?:[\w.-]+:)?workbookPr\b[^>]*\bdate1904\s*=\s*["'](?:1|true)["']/.test(workbook);
  const context: SheetContext = { strings, styles, date1904 };
  const sheets: Sheet[] = [];
  for (const { attrs } of elements(workbook, 'sheet')) {
    const a = attributes(attrs);
    const path = a.id !== undefined ? resolve(folder, rels.get(a.id)?.target) : undefined;
    sheets.push({
      name: a.name ?? '',
      hidden: a.state === 'hidden' || a.state === 'veryHidden',
      rows: async () => {
        const xml = path === undefined ? null : await read(path, true);
        if (xml === null) throw new WorkbookError(`The sheet '${a.name}' is missing from the workbook`, 'unreadable');
        return sheetRows(xml, context);
      },
    });
  }
  return sheets;
}

interface Relationship {
  type: string;
  target: string;
}

function relationships(xml: string | null): Map<string, Relationship> {
  const out = new Map<string, Relationship>();
  if (xml === null) return out;
  for (const { attrs } of elements(xml, 'Relationship')) {
    const a = attributes(attrs);
    if (a.Id && a.Target && a.TargetMode !== 'External') out.set(a.Id, { type: a.Type ?? '', target: a.Target });
  }
  return out;
}

function target(folder: string, rels: Map<string, Relationship>, typeSuffix: string): string | undefined {
  for (const rel of rels.values()) if (rel.type.endsWith(typeSuffix)) return resolve(folder, rel.target);
  return undefined;
}

/** A relationship target as a path from the archive's root. */
function resolve(folder: string, relative: string | undefined): string | undefined {
  if (relative === undefined) return undefined;
  const parts = (relative.startsWith('/') ? relative.slice(1) : folder + relative).split('/');
  const out: string[] = [];
  for (const part of parts) {
    if (part === '..') out.pop();
    else if (part !== '.' && part !== '') out.push(part);
  }
  return out.join('/');
}

function sharedStrings(xml: string | null): string[] {
  const out: string[] = [];
  if (xml !== null) for (const si of elements(xml, 'si')) out.push(si.content === null ? '' : runText(si.content));
  return out;
}

/** Built-in number formats that show dates or times (ECMA-376 18.8.30, with the CJK ones). */
const DATE_FORMAT_IDS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58,
]);

/** For each cell style index (`s`), whether its number format shows a date. */
function dateStyles(xml: string | null): boolean[] {
  if (xml === null) return [];
  const custom = new Map<number, string>();
  for (const { attrs } of elements(xml, 'numFmt')) {
    const a = attributes(attrs);
    custom.set(Number(a.numFmtId), a.formatCode ?? '');
  }
  const cellXfs = [...elements(xml, 'cellXfs')][0]?.content ?? '';
  return [...elements(cellXfs, 'xf')].map(({ attrs }) => {
    const id = Number(attributes(attrs).numFmtId ?? 0);
    const code = custom.get(id);
    return code === undefined ? DATE_FORMAT_IDS.has(id) : isDateFormat(code);
  });
}

/** A format code shows a date when, outside quoted text, escapes and [colour] blocks, it has d, m, y, h or s. */
function isDateFormat(code: string): boolean {
  const bare = code.replace(/"[^"]*"|\\.|_.|\*.|\[(?![hms]+\])[^\]]*\]/gi, '');
  return !/^general$/i.test(bare.trim()) && /[dmyhs]/i.test(bare);
}

interface SheetContext {
  strings: string[];
  styles: boolean[];
  date1904: boolean;
}

/** Rows read between two turns of the event loop: a large import leaves other requests their turns (docs/limits.md#large-work). */
const ROWS_PER_TURN = 1000;

const SHEET_DATA_OPEN = /<(?:[\w.-]+:)?sheetData(?=[\s/>])[^>]*?(\/?)>/;
const SHEET_DATA_CLOSE = /<\/(?:[\w.-]+:)?sheetData>/;
const ROW_CLOSE = /^<\/(?:[\w.-]+:)?row>$/;

/**
 * The rows of a sheet's XML, which comes in pieces (zip.ts readEntryPieces): the text of
 * <sheetData> is read a piece at a time, the rows that a piece completes (up to its last
 * </row>) are read ROWS_PER_TURN at a time, and a turn of the event loop passes between
 * pieces and between slices of rows: no step of a large import holds the loop for long.
 */
async function sheetRows(pieces: readonly Buffer[], context: SheetContext): Promise<SheetRow[]> {
  const decoder = new TextDecoder('utf-8');
  const reading: Reading = { rows: [], lastRow: 0 };
  // Text not read yet: before <sheetData> is found, then its rows not yet complete.
  let text = '';
  let inData = false;
  for (let i = 0; i < pieces.length; i++) {
    if (i > 0) await nextTurn();
    const last = i === pieces.length - 1;
    text += decoder.decode(pieces[i], { stream: !last });
    if (!inData) {
      const open = SHEET_DATA_OPEN.exec(text);
      if (open === null) {
        // Keep the tail only: the start of a tag split between two pieces.
        if (!last) text = text.slice(text.lastIndexOf('<') >= 0 ? text.lastIndexOf('<') : text.length);
        continue;
      }
      if (open[1] === '/') return reading.rows;
      inData = true;
      text = text.slice(open.index + open[0].length);
    }
    const close = SHEET_DATA_CLOSE.exec(text);
    // The complete rows: up to </sheetData>, or up to the piece's last </row>.
    const end = close !== null ? close.index : last ? text.length : lastRowEnd(text);
    await readRowsOf(reading, text.slice(0, end), context);
    if (close !== null) return reading.rows;
    text = text.slice(end);
  }
  return reading.rows;
}

/** The index just past the last </row> (any prefix) in the text; 0 when there is none. */
function lastRowEnd(text: string): number {
  for (let at = text.lastIndexOf('row>'); at >= 0; at = at === 0 ? -1 : text.lastIndexOf('row>', at - 1)) {
    const open = text.lastIndexOf('</', at);
    if (open >= 0 && ROW_CLOSE.test(text.slice(open, at + 4))) return at + 4;
  }
  return 0;
}

interface Reading {
  rows: SheetRow[];
  lastRow: number;
}

/** Reads the rows in the text, ROWS_PER_TURN between two turns. */
async function readRowsOf(reading: Reading, text: string, context: SheetContext): Promise<void> {
  const source = elements(text, 'row');
  while (!readRows(reading, source, context)) await nextTurn();
}

/** Reads up to ROWS_PER_TURN rows; true when the text is read. */
function readRows(reading: Reading, source: Iterator<{ attrs: string; content: string | null }>, context: SheetContext): boolean {
  for (let n = 0; n < ROWS_PER_TURN; n++) {
    const next = source.next();
    if (next.done) return true;
    const row = next.value;
    const r = Number(attributes(row.attrs).r);
    const number = Number.isInteger(r) && r > 0 ? r : reading.lastRow + 1;
    reading.lastRow = number;
    const cells: Cell[] = [];
    let lastColumn = 0;
    if (row.content !== null) {
      for (const c of elements(row.content, 'c')) {
        const a = attributes(c.attrs);
        const column = a.r !== undefined ? columnNumber(a.r) : lastColumn + 1;
        lastColumn = column;
        const cell = c.content === null ? undefined : cellValue(a, c.content, context);
        if (cell !== undefined) cells.push({ column, ...cell });
      }
    }
    if (cells.length > 0) reading.rows.push({ number, cells });
  }
  return false;
}

/** `BC12` -> 55. */
function columnNumber(ref: string): number {
  let n = 0;
  for (let i = 0; i < ref.length; i++) {
    const code = ref.charCodeAt(i) | 0x20;
    if (code < 0x61 || code > 0x7a) break;
    n = n * 26 + (code - 0x60);
  }
  return n;
}

const V = /<(?:[\w.-]+:)?v(?:\s[^>]*)?(?:\/>|>([\s\S]*?)<\/(?:[\w.-]+:)?v>)/;

/** A cell's value; a formula's cached result counts whatever it is (0, FALSE and "" too). */
function cellValue(a: Record<string, string>, content: string, context: SheetContext): Omit<Cell, 'column'> | undefined {
  const type = a.t ?? 'n';
  if (type === 'inlineStr') {
    const is = [...elements(content, 'is')][0];
    return is === undefined ? undefined : { value: is.content === null ? '' : runText(is.content), text: true };
  }
  const match = V.exec(content);
  if (match === null) return undefined;
  const raw = match[1] ?? '';
  switch (type) {
    case 's': {
      const text = context.strings[Number(raw)];
      return text === undefined ? undefined : { value: text, text: true };
    }
    case 'str':
      return { value: cellText(raw), text: true };
    case 'b':
      return { value: raw.trim() === '1' || raw.trim().toLowerCase() === 'true', text: false };
    case 'e':
      return undefined;
    case 'd': {
      const iso = isoDate(unescapeXml(raw).trim());
      return iso === undefined ? undefined : { value: iso, text: false };
    }
    default: {
      if (raw.trim() === '') return undefined;
      const n = Number(raw);
      if (!Number.isFinite(n)) return undefined;
      if (context.styles[Number(a.s ?? 0)] === true) {
        const iso = serialToIso(n, context.date1904);
        if (iso !== undefined) return { value: iso, text: false };
      }
      return { value: n, text: false };
    }
  }
}

/** An ISO 8601 `t="d"` value; without a zone it is read as UTC, as Excel has no zones. */
function isoDate(text: string): string | undefined {
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/i.test(text) || !text.includes('T') ? text : `${text}Z`;
  const time = Date.parse(/^\d{4}-\d\d-\d\d$/.test(zoned) ? `${zoned}T00:00:00Z` : zoned);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

const DAY_MS = 86_400_000;
/** 1899-12-30: serial 0 of the 1900 system, where serials from 61 on are exact (1900 is not a leap year). */
const EPOCH_1900 = Date.UTC(1899, 11, 30);
const EPOCH_1904 = Date.UTC(1904, 0, 1);

function serialToIso(serial: number, date1904: boolean): string | undefined {
  const ms = date1904 ? EPOCH_1904 + serial * DAY_MS : EPOCH_1900 + (serial < 61 ? serial + 1 : serial) * DAY_MS;
  const rounded = Math.round(ms);
  return Number.isFinite(rounded) && Math.abs(rounded) <= 8.64e15 ? new Date(rounded).toISOString() : undefined;
}
