import type { AddressInfo } from 'node:net';
import { createService, MemoryStorage, type ContentType, type Entity, type Service } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { call, RAW } from './handle-support';
import { EXCEL, readSheets } from './content-types-support';

/** Protocols and content types: the Service.Admin.Protocol listing, JSON Lines, plug-ins (SPEC 2.2, DESIGN 7). */

const DEFAULT_PROTOCOL_ENTITY = {
  Name: 'Service',
  Identifier: 'service',
  IsDefault: true,
  ContentTypes: [
    {
      Name: 'JSON',
      MimeType: 'application/json',
      CanRead: true,
      CanWrite: true,
      Bindings: ['application/json', 'application/service-json', 'json', 'text/plain'],
    },
    {
      Name: 'Spreadsheet (Excel format)',
      MimeType: EXCEL,
      CanRead: true,
      CanWrite: true,
      Bindings: [EXCEL, 'application/service-excel', 'excel'],
    },
    {
      Name: 'JSON Lines',
      MimeType: 'application/jsonlines',
      CanRead: false,
      CanWrite: true,
      Bindings: ['application/jsonlines', 'application/x-ndjson', 'application/x-jsonlines', 'jl'],
    },
  ],
};

function observatory(count = 3, options: Parameters<typeof createService>[0] = {}): Service {
  const service = createService(options);
  const stars = Array.from({ length: count }, (_, i) => ({
    Id: i + 1,
    Name: `Star ${i + 1}`,
    Magnitude: Math.round((i % 70) * 0.1 * 10) / 10,
    Catalog: { Hd: String(1000 + i).padStart(6, '0') },
  }));
  service.addResource({ name: 'Sky.Star', storage: new MemoryStorage(stars) });
  return service;
}

/** Tab-separated values, write-only: a plug-in as small as it gets. */
const tsv: ContentType = {
  name: 'TSV',
  mimeType: 'text/tab-separated-values',
  bindings: ['tsv', 'json'],
  write: (result) => (result.kind === 'entities' ? result.entities.map((e) => Object.values(e).join('\t')).join('\n') : ''),
};

describe('Service.Admin.Protocol lists the default protocol exactly as SPEC 2.2', () => {
  test('one protocol, Service / service, default, with JSON, Excel and JSON Lines in that order', async () => {
    const r = await call(observatory(), 'GET', '/Service.Admin.Protocol', { headers: RAW });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([DEFAULT_PROTOCOL_ENTITY]);
    expect(Object.keys(r.json[0])).toEqual(['Name', 'Identifier', 'IsDefault', 'ContentTypes']);
    expect(Object.keys(r.json[0].ContentTypes[0])).toEqual(['Name', 'MimeType', 'CanRead', 'CanWrite', 'Bindings']);
  });

  test('the listing answers conditions, REPORT and HEAD, and nothing that writes', async () => {
    const service = observatory();
    expect((await call(service, 'GET', '/Admin.Protocol/IsDefault=true/select=Identifier', { headers: RAW })).json).toEqual([
      { Identifier: 'service' },
    ]);
    expect((await call(service, 'REPORT', '/Service.Admin.Protocol', { headers: RAW })).json).toBe(1);
    expect((await call(service, 'HEAD', '/Service.Admin.Protocol')).status).toBe(200);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      expect((await call(service, method, '/Service.Admin.Protocol', { body: { Name: 'x' } })).status).toBe(405);
    }
  });

  test('the listing is written by any content type, e.g. JSON Lines', async () => {
    const r = await call(observatory(), 'GET', '/Service.Admin.Protocol', { headers: { accept: 'jl' } });
    expect(
      r.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ).toEqual([DEFAULT_PROTOCOL_ENTITY]);
  });
});

describe('protocols added by the application follow the default one', () => {
  const service = observatory(3, { protocols: [{ name: 'Tabular', identifier: 'tabular', contentTypes: [tsv] }] });

  test('listed after the default protocol, not default, with the MIME type among its bindings', async () => {
    const r = await call(service, 'GET', '/Service.Admin.Protocol', { headers: RAW });
    expect(r.json).toEqual([
      DEFAULT_PROTOCOL_ENTITY,
      {
        Name: 'Tabular',
        Identifier: 'tabular',
        IsDefault: false,
        ContentTypes: [
          {
            Name: 'TSV',
            MimeType: 'text/tab-separated-values',
            CanRead: false,
            CanWrite: true,
            Bindings: ['text/tab-separated-values', 'tsv', 'json'],
          },
        ],
      },
    ]);
  });

  test('its bindings select it for output; without extension it is no file download', async () => {
    const r = await call(service, 'GET', '/Star/Id<3/select=Id,Name', { headers: { accept: 'tsv' } });
    expect(r.text).toBe('1\tStar 1\n2\tStar 2');
    expect(r.headers['content-type']).toBe('text/tab-separated-values; charset=utf-8');
    expect(r.headers['content-disposition']).toBeUndefined();
  });

  test('a binding an earlier type already has keeps selecting the earlier type', async () => {
    expect((await call(service, 'GET', '/Star/Id=1', { headers: { accept: 'json' } })).json).toMatchObject({ Status: 'success' });
  });

  test('a type without read is 415 as Content-Type', async () => {
    expect((await call(service, 'POST', '/Star', { headers: { 'content-type': 'tsv' }, body: '9\tStar 9' })).status).toBe(415);
  });

  test('a second protocol with a taken identifier is refused when the service is created', () => {
    expect(() => createService({ protocols: [{ name: 'Mine', identifier: 'SERVICE', contentTypes: [tsv] }] })).toThrow(
      /identifier 'SERVICE'/,
    );
  });
});

describe('JSON Lines output: one entity per \\n-terminated line, streamed in chunks', () => {
  test('each entity is one line, the last one terminated too', async () => {
    const r = await call(observatory(), 'GET', '/Star/_/select=Id,Catalog', { headers: { accept: 'application/x-ndjson' } });
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"Id":1,"Catalog":{"Hd":"001000"}}\n{"Id":2,"Catalog":{"Hd":"001001"}}\n{"Id":3,"Catalog":{"Hd":"001002"}}\n');
  });

  test('a line break inside a value stays escaped, so a line is always one entity', async () => {
    const service = createService();
    service.addResource({ name: 'Note', storage: new MemoryStorage([{ Text: 'two\nlines\r\n' }, { Text: 'one' }]) });
    const r = await call(service, 'GET', '/Note', { headers: { accept: 'jl' } });
    expect(
      r.text
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l)),
    ).toEqual([{ Text: 'two\nlines\r\n' }, { Text: 'one' }]);
  });

  test('served as application/jsonlines, as a <Resource>_<yyMMddHHmmss>.jsonl download', async () => {
    const r = await call(observatory(), 'GET', '/Star', { headers: { accept: 'jl' } });
    expect(r.headers['content-type']).toBe('application/jsonlines');
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="Sky\.Star_\d{12}\.jsonl"$/);
  });

  test('many entities come in a few large chunks, each ending at a line end', async () => {
    const r = await observatory(20000).handle({ method: 'GET', uri: '/Star', headers: { accept: 'jl' } });
    const chunks: string[] = [];
    for await (const chunk of r.body as AsyncIterable<string>) chunks.push(String(chunk));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(100);
    for (const chunk of chunks) expect(chunk.endsWith('\n')).toBe(true);
    const lines = chunks.join('').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(20000);
    expect(JSON.parse(lines[19999])).toMatchObject({ Id: 20000 });
  });

  test('nothing found is 204 with no body', async () => {
    const r = await call(observatory(), 'GET', '/Star/Id>99', { headers: { accept: 'jl' } });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
  });
});

describe('JSON Lines: a result that is not entities is one line', () => {
  test('REPORT: the count envelope, or the bare count with raw=true', async () => {
    const service = observatory();
    const envelope = await call(service, 'REPORT', '/Star', { headers: { accept: 'jl' } });
    expect(envelope.text).toMatch(/^\{"Status":"success","Count":3,"TimeElapsedMs":[\d.]+\}\n$/);
    expect((await call(service, 'REPORT', '/Star', { headers: { accept: 'jl;raw=true' } })).text).toBe('3\n');
  });

  test('POST and DELETE: the change envelope on one line', async () => {
    const service = observatory();
    const post = await call(service, 'POST', '/Star', { headers: { accept: 'jl' }, body: [{ Id: 4 }, { Id: 5 }] });
    expect(post.status).toBe(201);
    expect(post.text.split('\n')).toHaveLength(2);
    expect(JSON.parse(post.text)).toMatchObject({ Status: 'success', Data: [{ Id: 4 }, { Id: 5 }], DataCount: 2, InsertedCount: 2 });
    const del = await call(service, 'DELETE', '/Star/Id>3/unsafe=true', { headers: { accept: 'jl' } });
    expect(JSON.parse(del.text)).toMatchObject({ DataCount: 0, DeletedCount: 2 });
  });
});

describe('JSON is no file download', () => {
  test('no Content-Disposition for JSON', async () => {
    expect((await call(observatory(), 'GET', '/Star')).headers['content-disposition']).toBeUndefined();
  });
});

describe('through a real node:http server, large JSON Lines and Excel responses stream', () => {
  const COUNT = 20000;
  let origin: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const server = createServer(observatory(COUNT));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(() => close());

  test('JSON Lines: chunked, every entity on its own line', async () => {
    const res = await fetch(`${origin}/Star`, { headers: { accept: 'application/jsonlines' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('content-disposition')).toMatch(/\.jsonl"$/);
    const lines = (await res.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(COUNT);
    expect(lines.map((l) => (JSON.parse(l) as Entity).Id)).toEqual(Array.from({ length: COUNT }, (_, i) => i + 1));
  });

  test('Excel: chunked, a workbook with a header row and every entity', async () => {
    const res = await fetch(`${origin}/Star`, { headers: { accept: EXCEL } });
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-disposition')).toMatch(/\.xlsx"$/);
    const [sheet] = await readSheets(Buffer.from(await res.arrayBuffer()));
    expect(sheet.rows).toHaveLength(COUNT + 1);
    expect(sheet.rows[0]).toEqual(['Id', 'Name', 'Magnitude', 'Catalog']);
    expect(sheet.rows[COUNT]).toEqual([
      COUNT,
      `Star ${COUNT}`,
      expect.any(Number),
      JSON.stringify({ Hd: String(1000 + COUNT - 1).padStart(6, '0') }),
    ]);
  });

  test('an Excel file posted over HTTP is read back', async () => {
    const file = Buffer.from(await (await fetch(`${origin}/Star/Id<=2`, { headers: { accept: 'excel' } })).arrayBuffer());
    const posted = await fetch(`${origin}/Star`, {
      method: 'POST',
      headers: { 'content-type': EXCEL, accept: 'json;raw=true' },
      body: file,
    });
    expect(posted.status).toBe(201);
    expect(await posted.json()).toEqual([
      { Id: 1, Name: 'Star 1', Magnitude: 0, Catalog: { Hd: '001000' } },
      { Id: 2, Name: 'Star 2', Magnitude: 0.1, Catalog: { Hd: '001001' } },
    ]);
  });
});
