import { createService, MemoryStorage, type ApiKeyConfig, type Service } from '@resourcery/core';
import { call as callService, RAW } from './handle-support';

/** API keys (SPEC 5, DESIGN 6). */

/** A request with raw JSON output and, when given, an Authorization header. */
function call(service: Service, method: string, uri: string, authorization?: string, body?: unknown) {
  const headers: Record<string, string> = { ...RAW };
  if (authorization !== undefined) headers.authorization = authorization;
  return callService(service, method, uri, { headers, body });
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

function serviceWith(apiKeys?: ApiKeyConfig[]): Service {
  const service = createService({ apiKeys });
  service.addResource({ name: 'Lab.Plant', storage: new MemoryStorage([{ Name: 'Fern' }, { Name: 'Moss' }]) });
  service.addResource({ name: 'Lab.Seed', storage: new MemoryStorage([{ Name: 'Oak' }]) });
  return service;
}

describe('with no keys configured the service is open', () => {
  test('a request without Authorization is served', async () => {
    const r = await call(serviceWith(), 'GET', '/Lab.Plant');
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(2);
  });

  test('an Authorization header is ignored', async () => {
    expect((await call(serviceWith([]), 'DELETE', '/Lab.Plant/Name=Moss', 'apikey whatever')).status).toBe(200);
  });
});

describe('a key is sent as apikey or as Basic with a blank user', () => {
  const service = serviceWith([{ key: 'green-thumb' }]);

  test.each(['apikey green-thumb', 'ApiKey green-thumb', 'APIKEY green-thumb', 'apikey   green-thumb'])(
    '%s is accepted',
    async (authorization) => {
      expect((await call(service, 'GET', '/Lab.Plant', authorization)).status).toBe(200);
    },
  );

  test.each(['Basic', 'basic', 'BASIC'])('scheme %s with a blank user and the key as password is accepted', async (scheme) => {
    const authorization = basic('', 'green-thumb').replace('Basic', scheme);
    expect((await call(service, 'GET', '/Lab.Plant', authorization)).status).toBe(200);
  });

  test('a key holding a colon works through Basic (only the first colon splits)', async () => {
    const colon = serviceWith([{ key: 'a:b:c' }]);
    expect((await call(colon, 'GET', '/Lab.Plant', basic('', 'a:b:c'))).status).toBe(200);
  });
});

describe('a missing or unknown key is 401', () => {
  const service = serviceWith([{ key: 'green-thumb' }]);

  test.each([
    ['no Authorization header', undefined],
    ['an unknown key', 'apikey brown-thumb'],
    ['a prefix of the key', 'apikey green'],
    ['the key with a suffix', 'apikey green-thumb2'],
    ['an empty apikey', 'apikey '],
    ['a bare scheme', 'apikey'],
    ['another scheme', 'Bearer green-thumb'],
    ['the key alone', 'green-thumb'],
    ['Basic with a non-blank user', basic('gardener', 'green-thumb')],
    ['Basic with the key as user', basic('green-thumb', '')],
    ['Basic without a colon', `Basic ${Buffer.from('green-thumb').toString('base64')}`],
  ])('%s -> 401 NotAuthorized', async (_what, authorization) => {
    const r = await call(service, 'GET', '/Lab.Plant', authorization);
    expect(r.status).toBe(401);
    expect(r.json.ErrorCode).toBe('NotAuthorized');
    expect(r.headers['www-authenticate']).toBe('Basic realm="Service"');
  });

  test('authentication comes before the URI is read: a bad URI without a key is still 401', async () => {
    expect((await call(service, 'GET', '/Nowhere/a/b/c/d')).status).toBe(401);
  });

  test('a failed request without a key leaves nothing in the error store', async () => {
    await call(service, 'GET', '/Lab.Plant', 'apikey nope');
    const r = await call(service, 'REPORT', '/Service.Admin.Error', 'apikey green-thumb');
    expect(r.json).toBe(0);
  });
});

describe('rights per resource and per method: 403 Forbidden otherwise', () => {
  let service: Service;
  beforeEach(() => {
    service = serviceWith([
      { key: 'admin', allow: [{ resources: ['Service.Admin.*'] }] },
      { key: 'reader', allow: [{ resources: ['Lab.Plant'], methods: ['GET'] }] },
      {
        key: 'planter',
        allow: [
          { resources: ['lab.*'], methods: ['post', 'GET'] },
          { resources: ['Lab.Seed'], methods: ['DELETE'] },
        ],
      },
      { key: 'root' },
    ]);
  });

  test('a glob (Service.Admin.*) grants every resource under it, every method', async () => {
    expect((await call(service, 'GET', '/Service.Admin.Error', 'apikey admin')).status).toBe(204);
    expect((await call(service, 'POST', '/Service.Admin.Macro', 'apikey admin', { Name: 'm', Uri: '/Lab.Plant' })).status).toBe(201);
    expect((await call(service, 'DELETE', '/Service.Admin.Macro/Name=m', 'apikey admin')).status).toBe(200);
  });

  test('a resource outside the glob is 403 Forbidden', async () => {
    const r = await call(service, 'GET', '/Lab.Plant', 'apikey admin');
    expect(r.status).toBe(403);
    expect(r.json.ErrorCode).toBe('Forbidden');
  });

  test('the glob matches whole names: Service.Admin.* does not grant Service.AdminX', async () => {
    const named = serviceWith([{ key: 'admin', allow: [{ resources: ['Service.Admin.*'] }] }]);
    named.addResource({ name: 'Service.AdminTools' });
    expect((await call(named, 'GET', '/Service.AdminTools', 'apikey admin')).status).toBe(403);
  });

  test('rights are checked on the resolved name, so a suffix gets no more than the full name', async () => {
    expect((await call(service, 'GET', '/plant', 'apikey reader')).status).toBe(200);
    expect((await call(service, 'GET', '/seed', 'apikey reader')).status).toBe(403);
  });

  test('a method the key lacks is 403 Forbidden', async () => {
    for (const method of ['POST', 'PUT', 'PATCH']) {
      const r = await call(service, method, '/Lab.Plant/Name=Fern', 'apikey reader', { Name: 'Fern' });
      expect([method, r.status, r.json.ErrorCode]).toEqual([method, 403, 'Forbidden']);
    }
    expect((await call(service, 'DELETE', '/Lab.Plant/Name=Fern', 'apikey reader')).status).toBe(403);
  });

  test('GET grants REPORT and HEAD', async () => {
    expect((await call(service, 'REPORT', '/Lab.Plant', 'apikey reader')).json).toBe(2);
    expect((await call(service, 'HEAD', '/Lab.Plant', 'apikey reader')).status).toBe(200);
  });

  test('REPORT or HEAD alone does not grant GET', async () => {
    const narrow = serviceWith([{ key: 'counter', allow: [{ methods: ['REPORT'] }] }]);
    expect((await call(narrow, 'REPORT', '/Lab.Plant', 'apikey counter')).status).toBe(200);
    expect((await call(narrow, 'GET', '/Lab.Plant', 'apikey counter')).status).toBe(403);
  });

  test('rules add up; globs and method names are case-insensitive', async () => {
    expect((await call(service, 'POST', '/Lab.Plant', 'apikey planter', { Name: 'Ivy' })).status).toBe(201);
    expect((await call(service, 'DELETE', '/Lab.Seed/Name=Oak', 'apikey planter')).status).toBe(200);
    expect((await call(service, 'DELETE', '/Lab.Plant/Name=Ivy', 'apikey planter')).status).toBe(403);
  });

  test('a key with no rules may do everything', async () => {
    expect((await call(service, 'DELETE', '/Lab.Plant/Name=Moss', 'apikey root')).status).toBe(200);
    expect((await call(service, 'REPORT', '/Service.Admin.Error', 'apikey root')).status).toBe(200);
  });

  test('Service.AvailableResource is open to every valid key, under any name', async () => {
    for (const uri of ['/', '/Service.AvailableResource', '/availableresource/Name=Lab.Plant']) {
      expect([uri, (await call(service, 'GET', uri, 'apikey reader')).status]).toEqual([uri, 200]);
    }
    // A key is shown only what it may use: Lab.Plant is not listed to the admin key.
    expect([(await call(service, 'GET', '/availableresource/Name=Lab.Plant', 'apikey admin')).status]).toEqual([204]);
    expect((await call(service, 'REPORT', '/', 'apikey reader')).status).toBe(200);
    expect((await call(service, 'GET', '/', 'apikey nobody')).status).toBe(401);
  });

  test('a macro call is checked against the resource it rewrites to', async () => {
    await call(service, 'POST', '/Service.Admin.Macro', 'apikey root', { Name: 'seeds', Uri: '/Lab.Seed' });
    expect((await call(service, 'GET', '/$seeds', 'apikey reader')).status).toBe(403);
    expect((await call(service, 'GET', '/$seeds', 'apikey planter')).status).toBe(200);
  });
});
