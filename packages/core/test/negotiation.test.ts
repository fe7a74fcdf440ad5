import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { negotiate, parseAccept, parseMediaType } from '../src/content-types/negotiation';
import { call } from './handle-support';

/** Content negotiation by binding (SPEC 2.2 and 4.6, DESIGN 7). */

const EXCEL = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

function library(): Service {
  const service = createService();
  service.addResource({
    name: 'Library.Book',
    storage: new MemoryStorage([
      { Isbn: '0262033844', Title: 'Introduction to Algorithms', Pages: 1312 },
      { Isbn: '0201633612', Title: 'Design Patterns', Pages: 395 },
    ]),
  });
  return service;
}

/** The MIME type of the response to a GET with this Accept header. */
async function typeFor(service: Service, accept: string | undefined): Promise<string> {
  const r = await call(service, 'GET', '/Book', { headers: accept === undefined ? {} : { accept } });
  if (r.status !== 200) return `${r.status} ${r.json?.ErrorCode}`;
  return r.headers['content-type'].split(';')[0];
}

describe('Accept selects the output type by any of its bindings', () => {
  const service = library();

  test.each([
    ['application/json', 'application/json'],
    ['application/service-json', 'application/json'],
    ['json', 'application/json'],
    ['text/plain', 'application/json'],
    [EXCEL, EXCEL],
    ['application/service-excel', EXCEL],
    ['excel', EXCEL],
    ['application/jsonlines', 'application/jsonlines'],
    ['application/x-ndjson', 'application/jsonlines'],
    ['application/x-jsonlines', 'application/jsonlines'],
    ['jl', 'application/jsonlines'],
  ])('Accept: %s writes %s', async (accept, type) => {
    expect(await typeFor(service, accept)).toBe(type);
  });

  test('bindings match case-insensitively', async () => {
    expect(await typeFor(service, 'Application/X-NDJSON')).toBe('application/jsonlines');
    expect(await typeFor(service, 'EXCEL')).toBe(EXCEL);
    expect(await typeFor(service, 'JL')).toBe('application/jsonlines');
  });

  test('no Accept, an empty one, */* and a lone * give JSON', async () => {
    for (const accept of [undefined, '', '*/*', '*', '*; q=.2']) expect(await typeFor(service, accept)).toBe('application/json');
  });

  test('type/* picks the first type with a binding of that type', async () => {
    expect(await typeFor(service, 'application/*')).toBe('application/json');
    expect(await typeFor(service, 'text/*')).toBe('application/json');
  });

  test('parameters other than raw and q are accepted and ignored', async () => {
    expect(await typeFor(service, 'application/x-ndjson; charset=utf-8')).toBe('application/jsonlines');
    expect(await typeFor(service, 'jl;charset="utf-8"')).toBe('application/jsonlines');
  });
});

describe('of the supported types the one with the highest q wins, ties in listed order', () => {
  const service = library();

  test('a higher q wins whatever its position', async () => {
    expect(await typeFor(service, 'application/json;q=0.5, application/x-ndjson')).toBe('application/jsonlines');
    expect(await typeFor(service, 'jl;q=0.2, excel;q=0.9, json;q=0.5')).toBe(EXCEL);
  });

  test('equal q: the type listed first wins', async () => {
    expect(await typeFor(service, 'excel, jl')).toBe(EXCEL);
    expect(await typeFor(service, 'jl, excel')).toBe('application/jsonlines');
    expect(await typeFor(service, '*/*, application/x-ndjson')).toBe('application/json');
  });

  test('unsupported types are skipped, even when preferred', async () => {
    expect(await typeFor(service, 'text/html, application/xhtml+xml;q=0.9, jl;q=0.1')).toBe('application/jsonlines');
  });

  test('q=0 refuses a type, also when a wildcard would accept it', async () => {
    expect(await typeFor(service, 'application/json;q=0, */*')).toBe(EXCEL);
    expect(await typeFor(service, 'json;q=0, excel;q=0, */*;q=0.5')).toBe('application/jsonlines');
  });

  test('a malformed entry is left out, the others still count', async () => {
    expect(await typeFor(service, 'excel;q=high, jl')).toBe('application/jsonlines');
    expect(await typeFor(service, 'not a type, jl')).toBe('application/jsonlines');
  });
});

describe('Accept: application/json;raw=true gives the bare value', () => {
  const service = library();

  test('raw=true gives the array without the envelope', async () => {
    const r = await call(service, 'GET', '/Book/_/select=Isbn', { headers: { accept: 'application/json;raw=true' } });
    expect(r.json).toEqual([{ Isbn: '0262033844' }, { Isbn: '0201633612' }]);
  });

  test('raw is read case-insensitively and from any JSON binding', async () => {
    for (const accept of ['Application/JSON; RAW=TRUE', 'json;raw=true', 'application/service-json;raw="true"', 'text/plain;raw=true']) {
      expect((await call(service, 'GET', '/Book/_/select=Isbn&limit=1', { headers: { accept } })).json).toEqual([{ Isbn: '0262033844' }]);
    }
  });

  test('the parameters of the chosen entry are the ones used', async () => {
    const r = await call(service, 'GET', '/Book/_/limit=1', { headers: { accept: 'jl;q=0.1, application/json;raw=true;q=0.9' } });
    expect(Array.isArray(r.json)).toBe(true);
  });

  test('without raw the envelope is written', async () => {
    expect((await call(service, 'GET', '/Book/_/limit=1', { headers: { accept: 'json' } })).json).toMatchObject({
      Status: 'success',
      DataCount: 1,
    });
  });
});

describe('an Accept nothing matches is 406 NotAcceptable', () => {
  const service = library();

  test.each(['application/x-unknown', 'text/html', 'image/*', 'csv', 'json;q=0', 'not a type'])('Accept: %s', async (accept) => {
    const r = await call(service, 'GET', '/Book', { headers: { accept } });
    expect(r.status).toBe(406);
    expect(r.json).toMatchObject({ Status: 'fail', ErrorCode: 'NotAcceptable' });
    expect(r.json.Message).toContain('application/jsonlines');
  });

  test('406 comes before the body is read or anything is written', async () => {
    const r = await call(service, 'POST', '/Book', { headers: { accept: 'text/html' }, body: { Isbn: '1' } });
    expect(r.status).toBe(406);
    expect((await call(service, 'REPORT', '/Book', { headers: { accept: 'json;raw=true' } })).json).toBe(2);
  });
});

describe('Content-Type selects the reader by binding', () => {
  test.each([
    'application/json',
    'application/service-json',
    'json',
    'text/plain',
    'APPLICATION/JSON; charset=utf-8',
    'json; charset="UTF-8"',
  ])('Content-Type: %s reads JSON', async (contentType) => {
    const service = library();
    const r = await call(service, 'POST', '/Book', {
      headers: { 'content-type': contentType, accept: 'json;raw=true' },
      body: '{"Isbn":"0131103628"}',
    });
    expect(r.status).toBe(201);
    expect(r.json).toEqual([{ Isbn: '0131103628' }]);
  });

  test('no Content-Type reads JSON', async () => {
    const r = await library().handle({ method: 'POST', uri: '/Book', body: '{"Isbn":"0131103628"}' });
    expect(r.status).toBe(201);
  });
});

describe('an unknown or unreadable Content-Type is 415 UnsupportedContent', () => {
  test.each([
    'application/x-unknown',
    'application/jsonlines',
    'application/x-ndjson',
    'jl',
    '*/*',
    'application/*',
    'application/json, text/plain',
    'not a type',
  ])('Content-Type: %s', async (contentType) => {
    const service = library();
    const r = await call(service, 'POST', '/Book', { headers: { 'content-type': contentType }, body: '{"Isbn":"0131103628"}\n' });
    expect(r.status).toBe(415);
    expect(r.json).toMatchObject({ Status: 'fail', ErrorCode: 'UnsupportedContent' });
    expect(r.json.Message).toContain(EXCEL);
    expect((await call(service, 'REPORT', '/Book', { headers: { accept: 'json;raw=true' } })).json).toBe(2);
  });
});

describe('Accept values are parsed as RFC 9110 lists', () => {
  test('entries keep their parameters and q, in listed order', () => {
    expect(parseAccept('application/json;raw=true, jl;q=0.5 , */*;q=0')).toEqual([
      { type: 'application/json', params: { raw: 'true' }, q: 1 },
      { type: 'jl', params: {}, q: 0.5 },
      { type: '*/*', params: {}, q: 0 },
    ]);
  });

  test('a comma inside a quoted parameter does not split the list', () => {
    expect(parseAccept('text/plain;note="a, b";q=0.3, excel')).toEqual([
      { type: 'text/plain', params: { note: 'a, b' }, q: 0.3 },
      { type: 'excel', params: {}, q: 1 },
    ]);
  });

  test('empty entries, bad q-values and non-tokens are dropped', () => {
    expect(parseAccept(' , json;q=2, json;q=-1, json;q=x, a b, jl;q=.25,').map((r) => [r.type, r.q])).toEqual([['jl', 0.25]]);
  });

  test('a Content-Type value is one media type or short binding', () => {
    expect(parseMediaType('Application/JSON; Charset=UTF-8')).toEqual({ type: 'application/json', params: { charset: 'UTF-8' }, q: 1 });
    expect(parseMediaType('excel')).toEqual({ type: 'excel', params: {}, q: 1 });
    expect(parseMediaType('application/json, text/plain')).toBeNull();
  });
});

describe('each candidate takes the q of the most specific range that names it', () => {
  const json = { name: 'json', bindings: ['application/json', 'json', 'text/plain'] };
  const lines = { name: 'lines', bindings: ['application/jsonlines', 'jl'] };
  const pick = (accept: string) => negotiate(parseAccept(accept), [json, lines])?.value.name;

  test('an exact binding outranks type/* and */* for the same candidate', () => {
    expect(pick('application/json;q=0.1, application/*;q=0.9')).toBe('lines');
    expect(pick('text/*;q=0.1, */*;q=0.5')).toBe('lines');
  });

  test('nothing acceptable gives undefined', () => {
    expect(pick('image/png')).toBeUndefined();
    expect(pick('*/*;q=0')).toBeUndefined();
  });
});
