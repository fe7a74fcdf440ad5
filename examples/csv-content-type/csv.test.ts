import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { startExample, type RunningExample } from '../start-example';
import { csv } from './csv';

/** An application adds CSV through `createService({ protocols })` (SPEC 2.2: "others may be added by the developer"). */

function bookshop(): Service {
  const service = createService({ protocols: [{ name: 'CSV', identifier: 'csv', contentTypes: [csv] }] });
  service.addResource({
    name: 'Book',
    storage: new MemoryStorage([
      { Title: 'Dune', Year: 1965, Tags: ['desert', 'politics'] },
      { Title: 'Quotes, "and" commas', Year: 2001, Note: 'two\nlines' },
    ]),
  });
  service.addResource({ name: 'Shelf' });
  return service;
}

async function send(service: Service, method: string, uri: string, headers: Record<string, string>, body?: string) {
  const r = await service.handle({ method, uri, headers, body });
  return { status: r.status, headers: r.headers, text: typeof r.body === 'string' ? r.body : '' };
}

describe('the CSV protocol is listed next to the default one', () => {
  test('Service.Admin.Protocol shows it, readable and writable, not default', async () => {
    const r = await send(bookshop(), 'GET', '/Service.Admin.Protocol/Identifier=csv', { accept: 'application/json;raw=true' });
    expect(JSON.parse(r.text)).toEqual([
      {
        Name: 'CSV',
        Identifier: 'csv',
        IsDefault: false,
        ContentTypes: [{ Name: 'CSV', MimeType: 'text/csv', CanRead: true, CanWrite: true, Bindings: ['text/csv', 'csv'] }],
      },
    ]);
  });
});

describe('Accept: text/csv (or csv) writes a header row and one row per entity', () => {
  test('values are quoted when they hold commas, quotes or line breaks; nested values are JSON', async () => {
    const r = await send(bookshop(), 'GET', '/Book', { accept: 'text/csv' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="Book_\d{12}\.csv"$/);
    expect(r.text).toBe(
      'Title,Year,Tags,Note\r\nDune,1965,"[""desert"",""politics""]",\r\n"Quotes, ""and"" commas",2001,,"two\nlines"\r\n',
    );
  });

  test('the short binding and a REPORT count work like any content type', async () => {
    const service = bookshop();
    expect((await send(service, 'GET', '/Book/Year>2000/select=Title', { accept: 'csv' })).text).toBe(
      'Title\r\n"Quotes, ""and"" commas"\r\n',
    );
    expect((await send(service, 'REPORT', '/Book', { accept: 'csv' })).text).toBe('Count\r\n2\r\n');
  });
});

describe('Content-Type: text/csv reads rows as entities, every value as text', () => {
  test('a CSV exported from one resource is posted to another', async () => {
    const service = bookshop();
    const exported = (await send(service, 'GET', '/Book', { accept: 'csv' })).text;
    const r = await send(service, 'POST', '/Shelf', { 'content-type': 'text/csv', accept: 'application/json;raw=true' }, exported);
    expect(r.status).toBe(201);
    expect(JSON.parse(r.text)).toEqual([
      { Title: 'Dune', Year: '1965', Tags: '["desert","politics"]', Note: '' },
      { Title: 'Quotes, "and" commas', Year: '2001', Tags: '', Note: 'two\nlines' },
    ]);
  });

  test('a byte order mark and blank lines are skipped; missing trailing fields are empty', async () => {
    const r = await send(
      bookshop(),
      'POST',
      '/Shelf',
      { 'content-type': 'csv', accept: 'application/json;raw=true' },
      '\uFEFFTitle,Year\n\nEmma\n',
    );
    expect(JSON.parse(r.text)).toEqual([{ Title: 'Emma', Year: '' }]);
  });
});

describe('the example server runs as a reader would run it', () => {
  let example: RunningExample;

  beforeAll(async () => {
    // Node 20 runs no TypeScript: bundle server.ts + csv.ts with tsup, as the server's header says.
    const examples = path.join(__dirname, '..');
    const build = spawnSync('npx', ['tsup', 'csv-content-type/server.ts', '--format', 'esm', '-d', 'csv-content-type/dist'], {
      cwd: examples,
      encoding: 'utf8',
    });
    if (build.status !== 0) throw new Error(`tsup failed:\n${build.stdout}\n${build.stderr}`);
    example = await startExample('csv-content-type/dist/server.js');
  });
  afterAll(() => example?.stop());

  test('books come out as CSV and go back in as CSV over HTTP', async () => {
    const got = await fetch(`${example.origin}/Book/_/select=Title,Year`, { headers: { accept: 'text/csv' } });
    expect(await got.text()).toBe('Title,Year\r\nThe Left Hand of Darkness,1969\r\nSolaris,1961\r\n');
    const posted = await fetch(`${example.origin}/Book`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', accept: 'csv' },
      body: 'Title,Year\r\nDune,1965\r\n',
    });
    expect(posted.status).toBe(201);
    expect(await posted.text()).toBe('Title,Year\r\nDune,1965\r\n');
  });
});
