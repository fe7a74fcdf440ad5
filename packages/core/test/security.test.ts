import { createService, MemoryStorage, type AdminOptions, type Service } from '@resourcery/core';
import { call, RAW, type Reply } from './handle-support';

/**
 * Security (docs/security.md): the built-in admin resources and every indirect path obey
 * the caller, in an app that authenticates its callers itself and with API keys.
 */

const SESSIONS: Record<string, string> = { 's-ann': 'ann', 's-bob': 'bob', 's-root': 'root' };

/** The orders example in small: a session header names the user, each sees only their orders. */
function shop(admin?: AdminOptions): Service {
  const service = createService({
    authenticate: (request) => {
      const user = SESSIONS[request.headers['x-session'] ?? ''];
      if (user === undefined) throw new Error('no session');
      return { id: user, admin: user === 'root' };
    },
    admin,
  });
  service.addResource({
    name: 'Shop.Order',
    key: 'Id',
    storage: new MemoryStorage([
      { Id: 1, Owner: 'ann', Item: 'tea' },
      { Id: 2, Owner: 'bob', Item: 'secret cake' },
    ]),
    rules: { rows: (caller) => (caller.principal.admin ? undefined : `Owner=${caller.principal.id}`) },
  });
  return service;
}

function as(
  user: string,
  service: Service,
  method: string,
  uri: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return call(service, method, uri, { headers: { ...RAW, 'x-session': `s-${user}`, ...headers }, body });
}

const ADMIN_URIS = ['/Service.Admin.Error', '/Service.Admin.Macro', '/Service.Admin.Webhook', '/Service.Admin.WebhookLog'];

describe('with authenticate, the admin resources are closed until the app opens them', () => {
  test.each(ADMIN_URIS)('%s: every method is 403 to an ordinary caller', async (uri) => {
    const service = shop();
    for (const method of ['GET', 'REPORT', 'DELETE', 'POST', 'PATCH']) {
      const r = await as('ann', service, method, method === 'DELETE' ? `${uri}/_/unsafe=true` : uri, method === 'POST' ? {} : undefined);
      expect([method, r.status]).toEqual([method, 403]);
    }
  });

  test("one caller cannot read another's session from the Error records, nor delete them", async () => {
    const service = shop();
    const failed = await as('bob', service, 'POST', '/Shop.Order', { Id: 2, Owner: 'bob', Item: 'x' });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect((await as('ann', service, 'GET', '/Service.Admin.Error')).status).toBe(403);
    expect((await as('ann', service, 'DELETE', '/Service.Admin.Error/_/unsafe=true')).status).toBe(403);
    // The app's own rules let root read them: the record is still there.
    const opened = shop({ rules: { allow: (caller) => caller.principal.admin } });
    await as('bob', opened, 'POST', '/Shop.Order', { Id: 2, Owner: 'bob', Item: 'x' });
    expect((await as('ann', opened, 'GET', '/Service.Admin.Error')).status).toBe(403);
    const records = await as('root', opened, 'GET', '/Service.Admin.Error/ResourceName=Shop.Order');
    expect(records.json).toHaveLength(1);
    expect(records.json[0].Principal).toBe('bob');
  });

  test('a row rule on Principal lets each caller follow the link to its own records only', async () => {
    const service = shop({
      resources: {
        'Service.Admin.Error': {
          allow: (caller, method) => method === 'GET' || caller.principal.admin,
          rows: (caller) => (caller.principal.admin ? undefined : `Principal=${caller.principal.id}`),
        },
      },
    });
    const bobs = await as('bob', service, 'GET', '/Shop.Order/_/bogus=1');
    const anns = await as('ann', service, 'GET', '/Nothing');
    expect(bobs.headers.errorinfo).toBeDefined();
    const own = await as('ann', service, 'GET', anns.headers.errorinfo);
    expect(own.json.map((r: { Principal: string }) => r.Principal)).toEqual(['ann']);
    expect((await as('ann', service, 'GET', bobs.headers.errorinfo)).status).toBe(204);
    expect((await as('ann', service, 'GET', '/Service.Admin.Error')).json).toHaveLength(1);
    expect((await as('root', service, 'GET', '/Service.Admin.Error')).json).toHaveLength(2);
    expect((await as('ann', service, 'DELETE', '/Service.Admin.Error/_/unsafe=true')).status).toBe(403);
    // Macros stay closed: only the Error records were opened.
    expect((await as('root', service, 'GET', '/Service.Admin.Macro')).status).toBe(403);
  });

  test('rules for an unknown admin resource are refused at start', () => {
    expect(() => shop({ resources: { 'Service.Admin.Nope': {} } as AdminOptions['resources'] })).toThrow(/Service\.Admin\.Nope/);
  });

  test('an open service and API keys keep their behaviour: keys name the admin resources they may use', async () => {
    const open = createService();
    expect((await call(open, 'GET', '/Service.Admin.Macro')).status).toBe(204);
    const keyed = createService({
      apiKeys: [
        { key: 'admin-key', allow: [{ resources: ['Service.Admin.*'] }] },
        { key: 'user-key', name: 'user', allow: [{ resources: ['Shop.*'] }] },
      ],
    });
    keyed.addResource({ name: 'Shop.Order' });
    await call(keyed, 'GET', '/Shop.Order/_/bogus=1', { headers: { authorization: 'apikey user-key' } });
    expect((await call(keyed, 'GET', '/Service.Admin.Error', { headers: { authorization: 'apikey user-key' } })).status).toBe(403);
    const records = await call(keyed, 'GET', '/Service.Admin.Error', { headers: { ...RAW, authorization: 'apikey admin-key' } });
    expect(records.json.map((r: { Principal: string }) => r.Principal)).toEqual(['user', 'user']);
  });
});

describe('macro poisoning: a macro cannot send its callers’ data elsewhere or change who they are', () => {
  const everyoneWritesMacros: AdminOptions = { resources: { 'Service.Admin.Macro': { allow: () => true } } };

  test.each([
    ['Destination', 'PUT /Shop.Drop'],
    ['Destination', 'POST https://attacker.example/drop'],
    ['Source', 'GET /Shop.Order'],
    ['X-Session', 's-root'],
    ['X-Auth-Token', 't'],
    ['X-Forwarded-For', '10.0.0.1'],
    ['Host', 'elsewhere.example'],
  ])('in-app: a %s header is refused at save (400)', async (name, value) => {
    const service = shop(everyoneWritesMacros);
    const r = await as('ann', service, 'POST', '/Service.Admin.Macro', { Name: 'report', Uri: '/Shop.Order', Headers: { [name]: value } });
    expect([r.status, r.json.ErrorCode]).toEqual([400, 'InvalidResourceEntity']);
    expect(r.json.Data.Headers).toMatch(new RegExp(name));
  });

  test('with an API key holding only Macro rights: Destination and Source are refused, Accept is kept', async () => {
    const keyed = createService({ apiKeys: [{ key: 'macros', allow: [{ resources: ['Service.Admin.Macro'] }] }, { key: 'root' }] });
    const headers = { ...RAW, authorization: 'apikey macros' };
    for (const h of [{ Destination: 'PUT /Loot' }, { source: 'GET /Secret' }]) {
      const r = await call(keyed, 'POST', '/Service.Admin.Macro', { headers, body: { Name: 'm', Uri: '/Secret', Headers: h } });
      expect(r.status).toBe(400);
    }
    const ok = await call(keyed, 'POST', '/Service.Admin.Macro', {
      headers,
      body: { Name: 'm', Uri: '/Secret', Headers: { Accept: 'application/json' } },
    });
    expect(ok.status).toBe(201);
  });

  test("a Destination stored before the check (or by hand) is never set: the caller's rows stay where they are", async () => {
    const macros = new MemoryStorage([
      {
        Name: 'mine',
        Uri: '/Shop.Order',
        Body: null,
        Headers: { Destination: 'POST /Shop.Drop' },
        OverwriteBody: false,
        OverwriteHeaders: true,
      },
    ]);
    const service = createService({
      authenticate: (request) => ({ id: SESSIONS[request.headers['x-session'] ?? ''] ?? 'nobody' }),
      adminStorage: (name) => (name === 'Service.Admin.Macro' ? macros : undefined),
    });
    service.addResource({ name: 'Shop.Order', storage: new MemoryStorage([{ Id: 2, Owner: 'bob', Item: 'secret cake' }]) });
    service.addResource({ name: 'Shop.Drop' });
    const r = await as('bob', service, 'GET', '/$mine');
    expect(r.json).toEqual([{ Id: 2, Owner: 'bob', Item: 'secret cake' }]);
    expect((await as('ann', service, 'GET', '/Shop.Drop')).status).toBe(204);
  });
});
