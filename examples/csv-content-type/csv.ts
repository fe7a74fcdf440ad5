import { propertyNames, resultEntities, resultSummary, type ContentType } from '@resourcery/core';

/**
 * CSV (RFC 4180) as a content type: a header row of property names, then one row per
 * entity; nested values as JSON text. CSV has no types, so every value reads back as text.
 */
export const csv: ContentType = {
  name: 'CSV',
  mimeType: 'text/csv',
  bindings: ['text/csv', 'csv'],
  extension: 'csv',
  read(body) {
    const [names = [], ...rows] = parseCsv(
      Buffer.from(body)
        .toString('utf8')
        .replace(/^\uFEFF/, ''),
    );
    return rows
      .filter((row) => row.some((cell) => cell !== ''))
      .map((row) => Object.fromEntries(names.map((name, i) => [name, row[i] ?? ''])));
  },
  write(result) {
    const entities = result.kind === 'count' ? [resultSummary(result)] : resultEntities(result);
    const names = propertyNames(entities);
    return [names, ...entities.map((e) => names.map((name) => e[name]))].map((row) => `${row.map(field).join(',')}\r\n`).join('');
  },
};

function field(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  for (const [, quoted, plain, end] of text.matchAll(/(?:"((?:[^"]|"")*)"|([^",\r\n]*))(,|\r?\n|$)/g)) {
    row.push(quoted === undefined ? plain : quoted.replace(/""/g, '"'));
    if (end === ',') continue;
    rows.push(row);
    row = [];
    if (end === '') break;
  }
  return rows;
}
