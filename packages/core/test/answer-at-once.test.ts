import { createService, MemoryStorage, type PlainResponse, type Service, type Storage } from '@resourcery/core';
import { bodyText } from './handle-support';

/**
 * `service.answer` answers at once when no step of the request waits (the adapters then
 * write in the listener's turn), else through promises. Both ways must give the same
 * answer: the same requests go to a service whose storage and authenticator answer at once,
 * and to one whose storage and authenticator answer through promises (every step after
 * them continues asynchronously), over the same stored objects (so the same ETags).
 */

const PEOPLE = [
  { Id: 1, Name: 'Ada', Age: 36, City: 'London', Tags: ['a', 'b'] },
  { Id: 2, Name: 'Linus', Age: 12, City: 'Helsinki', Tags: [] },
  { Id: 3, Name: 'Grace', Age: 45, City: null, Tags: ['c'] },
  { Id: 4, Name: 'Tim', Age: 9, City: 'London' },
  { Id: 5, Name: 'Ünal', Age: 45, City: 'İzmir', Tags: ['a'] },
];

/** The memory storage behind promises: nothing of a request answers at once. */
function later(inner: MemoryStorage): Storage {
  return {
    select: async (q) => inner.select(q),
    count: (q) => inner.count(q),
    stamp: (e) => inner.stamp(e),
    write: (b) => inner.write(b),
  };
}

function serviceOver(storage: Storage, waits: boolean, macros: Storage): Service {
  const service = createService({
    authenticate: waits ? async () => 'someone' : () => 'someone',
    adminStorage: (name) => (name === 'Service.Admin.Macro' ? macros : undefined),
    admin: { rules: { allow: () => true } },
  });
  service.addResource({ name: 'Person', key: 'Id', storage });
  service.addResource({ name: 'Hidden', storage: waits ? later(new MemoryStorage(PEOPLE)) : new MemoryStorage(PEOPLE), methods: ['POST'] });
  return service;
}

const READS: Array<[string, string, Record<string, string>?]> = [
  ['GET', '/Person'],
  ['GET', '/Person/7'],
  ['GET', '/Person/1'],
  ['GET', '/person/id=3/select=Name,City'],
  ['GET', '/Person/Age>=12&City!=null/order_desc=Age&limit=2&select=Name,Age'],
  ['GET', '/Person/_/select=City&distinct=true'],
  ['GET', '/Person/_/search=lon'],
  ['GET', '/Person/_/search=ü&order_asc=Name'],
  ['GET', '/Person/_/offset=3'],
  ['GET', '/Person/_/add=Name&rename=Name->N&select=N,Age'],
  ['GET', '/Person/Name=Ada', { accept: 'application/json;raw=true' }],
  ['GET', '/Person/_/limit=2', { accept: 'application/jsonl' }],
  ['HEAD', '/Person/1'],
  ['REPORT', '/Person/Age>10'],
  ['GET', '/Person/Age~3'],
  ['GET', '/Nobody'],
  ['GET', '/Hidden'],
  ['DELETE', '/Service.Admin.Protocol'],
  ['GET', '/Person/1', { 'if-none-match': '"nope"' }],
  ['GET', '/Person/1', { 'if-match': '"nope"' }],
  ['GET', '/Person/1', { 'if-match': '*' }],
  ['GET', '/'],
  ['GET', '/$adults/select=Name'],
  ['GET', '/$missing'],
];

/** What must be equal: the elapsed time is measured per request, so it is left out. */
async function comparable(response: PlainResponse) {
  const text = (await bodyText(response.body))
    .replace(/"TimeElapsedMs":[-+0-9.eE]+/g, '"TimeElapsedMs":0')
    .replace(/"TimeStamp":"[^"]*"/g, '"TimeStamp":""');
  const { errorinfo, ...headers } = response.headers;
  // A download's file name carries the second the request came: the two may straddle one.
  if (headers['content-disposition']) headers['content-disposition'] = headers['content-disposition'].replace(/\d{12}/, 'yyMMddHHmmss');
  // Each service keeps its own Error records.
  return { status: response.status, headers, errorinfo: errorinfo !== undefined, text: text.replace(/Service\.Admin\.Error\/id=\w+/g, '') };
}

describe('an answer given at once is the answer given through promises', () => {
  const data = new MemoryStorage(PEOPLE);
  const macros = new MemoryStorage([]);
  const now = serviceOver(data, false, macros);
  const waiting = serviceOver(later(data), true, later(macros));

  beforeAll(async () => {
    const made = await now.handle({
      method: 'POST',
      uri: '/Service.Admin.Macro',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'adults', Uri: '/Person/Age>=18/order_asc=Name' }),
    });
    expect(made.status).toBe(201);
  });

  test.each(READS)('%s %s %j', async (method, uri, headers = {}) => {
    const request = () => ({ method, uri, headers: { accept: '*/*', ...headers }, body: null, basePath: '/api' });
    const fast = now.answer(request());
    const slow = waiting.answer(request());
    expect(slow).toBeInstanceOf(Promise);
    expect(await comparable(await fast)).toEqual(await comparable(await slow));
    expect(await comparable(await now.handle(request()))).toEqual(await comparable(await slow));
  });

  test('a GET from the memory storage is answered at once, with the ETag the conditional GET then matches', async () => {
    const one = now.answer({ method: 'GET', uri: '/Person/1', headers: {}, body: null });
    expect(one).not.toBeInstanceOf(Promise);
    const { status, headers } = one as PlainResponse;
    expect(status).toBe(200);
    const again = now.answer({ method: 'GET', uri: '/Person/1', headers: { 'if-none-match': headers.etag }, body: null });
    expect(again).toEqual({ status: 304, headers: { etag: headers.etag }, body: null });
  });

  test('handle still answers with a promise', async () => {
    const handled = now.handle({ method: 'GET', uri: '/Person/1', headers: {}, body: null });
    expect(handled).toBeInstanceOf(Promise);
    expect((await handled).status).toBe(200);
  });
});
