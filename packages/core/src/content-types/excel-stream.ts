/** exceljs's streaming workbook writer, turned into a body that honours back-pressure. */
import { PassThrough } from 'node:stream';

import { ServiceError } from '../errors.js';

type ExcelJs = typeof import('exceljs');
type Worksheet = import('exceljs').Worksheet;

let loading: Promise<ExcelJs> | undefined;
let loaded: ExcelJs | undefined;

/**
 * exceljs takes about 250 ms and 30 MB to load, so it is loaded on the first spreadsheet,
 * not with the service. It is an optional peer dependency (docs/install.md#excel-output): an app
 * that never writes Excel need not install it, and asking for Excel there is a 406 that
 * names the package. It is CommonJS: `default` is its module.exports under every loader
 * (Node ESM, the CJS build, jest); the fallback covers loaders that unwrap it.
 */
function loadExcelJs(): Promise<ExcelJs> {
  loading ??= import('exceljs').then(
    (m) => (loaded = (m as unknown as { default?: ExcelJs }).default ?? m),
    (error: unknown) => {
      loading = undefined;
      throw isMissing(error) ? missingExcelJs() : error;
    },
  );
  return loading;
}

/** The package exceljs itself cannot be found (not one of its own files or dependencies). */
function isMissing(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /['"]exceljs['"]/.test(String(message));
}

function missingExcelJs(): ServiceError {
  return new ServiceError(
    'NotAcceptable',
    'Spreadsheet (Excel) output needs the package exceljs, which this server does not have installed (npm install exceljs@4). Ask for JSON or JSON Lines instead.',
  );
}

/**
 * Loads exceljs before a request that answers in Excel runs (so a write is not made that
 * cannot be answered): undefined once it is loaded, else a promise that rejects with the
 * 406 above when the package is absent.
 */
export function prepareExcel(): Promise<void> | undefined {
  return loaded === undefined ? loadExcelJs().then(() => undefined) : undefined;
}

export interface SheetSource {
  name: string;
  /** Sheets the reader needs but people do not are 'veryHidden' (not listed in Excel's Unhide dialog). */
  state?: 'visible' | 'hidden' | 'veryHidden';
  /** exceljs row values: index 0 stays empty, column n is index n, holes are empty cells. */
  rows: Iterable<unknown[]>;
}

/** Rows written between turns given to the zip (and looks at its backlog). */
const CHECK_EVERY = 100;
/** Sheet XML the zip may hold before the writer waits for it (and for the client) to catch up. */
const MAX_BACKLOG = 1024 * 1024;

/** An .xlsx file written row by row while the consumer reads it; memory stays flat. */
export async function* streamWorkbook(sheets: readonly SheetSource[]): AsyncGenerator<Uint8Array> {
  const ExcelJS = await loadExcelJs();
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: false, useSharedStrings: false });
  const stop = new AbortController();
  writeSheets(workbook, sheets, stop.signal).catch((error: unknown) => out.destroy(error as Error));
  try {
    for await (const chunk of out) yield chunk as Uint8Array;
  } finally {
    stop.abort();
    // A writer stopped half-way may still be flushing into `out`: nothing is listening any more.
    out.on('error', () => undefined);
    out.destroy();
  }
}

async function writeSheets(
  workbook: import('exceljs').stream.xlsx.WorkbookWriter,
  sheets: readonly SheetSource[],
  signal: AbortSignal,
): Promise<void> {
  for (const sheet of sheets) {
    const worksheet = workbook.addWorksheet(sheet.name, sheet.state ? { state: sheet.state } : undefined);
    let count = 0;
    for (const row of sheet.rows) {
      worksheet.addRow(row).commit();
      if (++count % CHECK_EVERY === 0) {
        await caughtUp(worksheet, signal);
        if (signal.aborted) return;
      }
    }
    worksheet.commit();
  }
  await workbook.commit();
}

interface ZipEntryInput {
  _writableState?: { length: number };
  once(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/**
 * exceljs 4.4 hands each sheet's XML to its zip without back-pressure (its StreamBuf
 * ignores `write()`'s answer), so a fast producer piles XML up in memory. The zip entry's
 * input buffer is the one place the backlog shows (it grows when compression or the
 * client falls behind): past MAX_BACKLOG, wait for it to drain. Below, still yield, so
 * compression (on the thread pool) keeps running while rows are produced.
 */
function caughtUp(worksheet: Worksheet, signal: AbortSignal): Promise<void> {
  const input = (worksheet as unknown as { stream?: { pipes?: ZipEntryInput[] } }).stream?.pipes?.[0];
  const backlog = input?._writableState?.length;
  // Unknown internals (another exceljs version) fall back to yielding only.
  if (input === undefined || backlog === undefined || backlog <= MAX_BACKLOG) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const done = () => {
      input.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    input.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
