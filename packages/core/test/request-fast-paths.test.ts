import { createService, MemoryStorage, stripBasePath } from '@resourcery/core';
import { parseUri } from '@resourcery/core/storage';
import { clearParseCache } from '@resourcery/core/internal';

/**
 * The small GET's shortcuts (docs/performance.md, "Small GET: fewer copies a request")
 * answer exactly as the general paths do: a mount path matched without lower-cased
 * copies, the URI and Accept value asked last reused, header names checked without copies.
 */

describe('stripBasePath: an exact prefix and a prefix in other letter case answer alike', () => {
  test.each([
    ['/api/Person/id=7', '/api', '/Person/id=7'],
    ['/API/Person', '/api', '/Person'],
    ['/api', '/api', '/'],
    ['/api?x=1', '/api/', '/?x=1'],
    ['/apiary', '/api', undefined],
    ['/other/api', '/api', undefined],
    ['/café/x', '/café', '/x'],
    ['/CAFÉ/x', '/café', '/x'],
    // U+212A KELVIN SIGN lower-cases to an ASCII k: matched as before.
    ['/\u212Api/x', '/kpi', '/x'],
    ['/x', '/', '/x'],
  ])('%s under %s', (url, base, expected) => {
    expect(stripBasePath(url, base)).toBe(expected);
  });
});

describe('parseUri reuses the URI parsed last only while it is the cached one', () => {
  test('alternating URIs each get their own parse; a cleared cache parses again', () => {
    const a = parseUri('/Person/Age>30');
    const b = parseUri('/Person/Age<30');
    expect(parseUri('/Person/Age>30')).toBe(a);
    expect(parseUri('/Person/Age>30')).toBe(a);
    expect(parseUri('/Person/Age<30')).toBe(b);
    clearParseCache();
    const again = parseUri('/Person/Age<30');
    expect(again).not.toBe(b);
    expect(again).toEqual(b);
  });
});

describe('a service answers by the headers and Accept of each request, whatever came before', () => {
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage([{ id: 7, Name: 'Ada' }]) });
  const get = (headers: Record<string, string>) =>
    service.handle({ method: 'GET', uri: '/Person/id=7', headers, body: null, basePath: '' });

  test('alternating Accept values, none, and upper-case or non-ASCII header names', async () => {
    const envelope = (await get({})).body as string;
    expect(JSON.parse(envelope).Data).toEqual([{ id: 7, Name: 'Ada' }]);
    const answers = [];
    const asked: Record<string, string>[] = [
      { accept: 'application/json;raw=true' },
      { accept: 'application/jsonlines' },
      { accept: 'application/json;raw=true' },
      {},
      { Accept: 'application/json;raw=true' },
      { 'x-naïve': '1', accept: 'application/jsonlines' },
      { 'X-NAÏVE': '1', Accept: 'application/json;raw=true' },
      { accept: 'image/png' },
      { accept: 'image/png' },
      { accept: 'application/json;raw=true' },
    ];
    for (const headers of asked) answers.push(await get(headers));
    const text = (body: unknown) => (typeof body === 'string' ? body.replace(/"TimeElapsedMs":[0-9.e-]+/, '"TimeElapsedMs":0') : 'stream');
    const described = answers.map((r) => `${r.status} ${r.headers['content-type']} ${text(r.body)}`);
    expect(described).toEqual([
      '200 application/json; charset=utf-8 [{"id":7,"Name":"Ada"}]',
      '200 application/jsonlines stream',
      '200 application/json; charset=utf-8 [{"id":7,"Name":"Ada"}]',
      `200 application/json; charset=utf-8 ${text(envelope)}`,
      '200 application/json; charset=utf-8 [{"id":7,"Name":"Ada"}]',
      '200 application/jsonlines stream',
      '200 application/json; charset=utf-8 [{"id":7,"Name":"Ada"}]',
      expect.stringMatching(/^406 /),
      expect.stringMatching(/^406 /),
      '200 application/json; charset=utf-8 [{"id":7,"Name":"Ada"}]',
    ]);
  });
});

describe('a resource reuses the query it compiled last only for the same parse', () => {
  const service = createService();
  const people = [
    { id: 7, Name: 'Ada', Age: 36 },
    { id: 8, Name: 'Alan', Age: 41 },
  ];
  service.addResource({ name: 'Person', storage: new MemoryStorage(people) });
  service.addResource({ name: 'Pet', storage: new MemoryStorage([{ id: 7, Name: 'Rex' }]) });
  const get = async (uri: string) => {
    const r = await service.handle({ method: 'GET', uri, headers: { accept: 'application/json;raw=true' }, body: null, basePath: '' });
    return `${r.status} ${r.headers.etag === undefined ? 'no-etag' : 'etag'} ${typeof r.body === 'string' ? r.body : ''}`;
  };

  test('alternating URIs, resources, a projection and a refused query each get their own answer', async () => {
    const asked = [
      '/Person/id=7',
      '/Person/id=8',
      '/Person/id=7',
      '/Pet/id=7',
      '/Person/id=7/select=Name',
      '/Person/id=7/order=Nope&select=Nope',
      '/Person/id=7',
      '/Person/id=7/select=Name',
      '/Person/Age>30/select=Name',
    ];
    const answers = [];
    for (const uri of asked) answers.push(await get(uri));
    expect(answers).toEqual([
      '200 etag [{"id":7,"Name":"Ada","Age":36}]',
      '200 etag [{"id":8,"Name":"Alan","Age":41}]',
      '200 etag [{"id":7,"Name":"Ada","Age":36}]',
      '200 etag [{"id":7,"Name":"Rex"}]',
      // One entity projected: still the stored entity's version.
      '200 etag [{"Name":"Ada"}]',
      expect.stringMatching(/^400 no-etag /),
      '200 etag [{"id":7,"Name":"Ada","Age":36}]',
      '200 etag [{"Name":"Ada"}]',
      '200 no-etag [{"Name":"Ada"},{"Name":"Alan"}]',
    ]);
  });
});

describe('a method and an Accept value are read alike whatever their case or the value before', () => {
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage([{ id: 7, Name: 'Ada' }]) });
  const ask = async (method: string, accept?: string) => {
    const r = await service.handle({
      method,
      uri: '/Person/id=7',
      headers: accept === undefined ? {} : { accept },
      body: null,
      basePath: '',
    });
    const body = typeof r.body === 'string' ? r.body.replace(/"TimeElapsedMs":[0-9.e-]+/, '"TimeElapsedMs":0') : String(r.body);
    return `${r.status} ${body}`;
  };

  test('get, Get, GET, HEAD and head; a blank Accept after a raw one is no Accept', async () => {
    const envelope = '200 {"Status":"success","Data":[{"id":7,"Name":"Ada"}],"DataCount":1,"TimeElapsedMs":0}';
    expect(await ask('get')).toBe(envelope);
    expect(await ask('Get', 'application/json;raw=true')).toBe('200 [{"id":7,"Name":"Ada"}]');
    expect(await ask('GET', 'application/json;raw=true')).toBe('200 [{"id":7,"Name":"Ada"}]');
    expect(await ask('GET', '  ')).toBe(envelope);
    expect(await ask('GET', 'application/json;raw=true')).toBe('200 [{"id":7,"Name":"Ada"}]');
    expect(await ask('GET', '')).toBe(envelope);
    expect(await ask('head')).toBe('200 null');
    expect(await ask('HEAD')).toBe('200 null');
    expect(await ask('dElEtE', 'application/json;raw=true')).toMatch(/^200 /);
    expect(await ask('GET')).toBe('204 null');
  });
});
