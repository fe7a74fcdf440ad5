import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { bodyText, call, PEOPLE, PERSON_SCHEMA, RAW } from './handle-support';

/** Request bodies, 405, views, resource lookup and the resource listing, through `service.handle`. */

let service: Service;
let people: MemoryStorage;

function stored(): unknown[] {
  return [...people.all()];
}

beforeEach(() => {
  service = createService();
  people = new MemoryStorage(PEOPLE.map((p) => ({ ...p })));
  service.addResource({
    name: 'Lab.Person',
    description: 'People in the lab',
    schema: PERSON_SCHEMA,
    storage: people,
    views: [
      { name: 'Adults', description: 'People aged 18 or more, by name', conditions: 'Age>=18', meta: 'order_asc=Name' },
      { name: 'Kids', conditions: 'Age<18' },
    ],
  });
  service.addResource({ name: 'Lab.Tool', storage: new MemoryStorage([{ Name: 'Pipette' }]) });
  service.addResource({ name: 'Shop.Tool', storage: new MemoryStorage([{ Name: 'Hammer' }]) });
  service.addResource({ name: 'Lab.Log', methods: ['GET', 'POST'] });
});

describe('bodies are read and checked before anything is written', () => {
  test('POST, PUT, PATCH without a body: 400 NoDataSource', async () => {
    for (const method of ['POST', 'PUT', 'PATCH']) {
      const r = await call(service, method, '/Lab.Person/Id=1');
      expect([method, r.status, r.json.ErrorCode]).toEqual([method, 400, 'NoDataSource']);
    }
  });

  test('an empty body counts as no body', async () => {
    const r = await call(service, 'POST', '/Lab.Person', { body: '' });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('NoDataSource');
  });

  test('malformed JSON: 400 FailedJsonDeserialization', async () => {
    const r = await call(service, 'POST', '/Lab.Person', { body: '{"Name": "Ada", ' });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('FailedJsonDeserialization');
  });

  test('a JSON body that is not UTF-8: 400 FailedJsonDeserialization, nothing stored as U+FFFD', async () => {
    const count = async () => (await call(service, 'REPORT', '/Lab.Person', { headers: RAW })).text;
    const before = await count();
    const body = Buffer.concat([Buffer.from('{"Name":"Ad'), Buffer.from([0xff, 0xfe]), Buffer.from('a","Age":1}')]);
    const r = await service.handle({ method: 'POST', uri: '/Lab.Person', headers: { 'content-type': 'application/json' }, body });
    expect(r.status).toBe(400);
    expect(JSON.parse(await bodyText(r.body)).Message).toContain('not UTF-8');
    expect(await count()).toBe(before);
  });

  test.each([
    ['a number', '42'],
    ['a string', '"Ada"'],
    ['null', 'null'],
    ['an array holding a non-object', '[{"Name":"Ada","Age":1}, 7]'],
    ['an array holding an array', '[[{"Name":"Ada","Age":1}]]'],
  ])('a body that is %s: 400 InvalidResourceEntity', async (_what, body) => {
    const r = await call(service, 'POST', '/Lab.Person', { body });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(stored()).toEqual(PEOPLE);
  });

  test('a schema violation: 400 InvalidResourceEntity with Data {property: message}', async () => {
    const r = await call(service, 'POST', '/Lab.Person', { body: { Name: '', Age: -1, Nickname: 'x' } });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(Object.keys(r.json.Data).sort()).toEqual(['Age', 'Name', 'Nickname']);
    for (const message of Object.values(r.json.Data)) expect(typeof message).toBe('string');
    expect(r.json.Message).toMatch(/Age/);
  });

  test('a missing required property is named in Data', async () => {
    const r = await call(service, 'POST', '/Lab.Person', { body: { Name: 'Nameless' } });
    expect(r.status).toBe(400);
    expect(r.json.Data).toEqual({ Age: expect.any(String) });
  });

  test('one bad entity in an array: none of the array is stored', async () => {
    const r = await call(service, 'POST', '/Lab.Person', {
      body: [
        { Name: 'Good', Age: 20 },
        { Name: 'Bad', Age: 'old' },
        { Name: 'Good too', Age: 21 },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(r.json.Data).toHaveProperty('Age');
    expect(stored()).toEqual(PEOPLE);
  });

  test('a body over maxBodyBytes: 413 PayloadTooLarge, nothing stored', async () => {
    const small = createService({ maxBodyBytes: 64 });
    const storage = new MemoryStorage();
    small.addResource({ name: 'Note', storage });
    const r = await call(small, 'POST', '/Note', { body: { Text: 'x'.repeat(100) } });
    expect(r.status).toBe(413);
    expect(r.json.ErrorCode).toBe('PayloadTooLarge');
    expect(storage.all()).toHaveLength(0);
  });

  test('a streamed body over maxBodyBytes is cut off with 413', async () => {
    const small = createService({ maxBodyBytes: 64 });
    small.addResource({ name: 'Note' });
    let pulled = 0;
    async function* chunks() {
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield i === 0 ? '[{"Text":"' : 'xxxxxxxxxxxxxxxxxxxx';
      }
    }
    const res = await small.handle({ method: 'POST', uri: '/Note', headers: { 'content-type': 'application/json' }, body: chunks() });
    expect(res.status).toBe(413);
    expect(pulled).toBeLessThan(1000);
  });

  test('a body at exactly maxBodyBytes is accepted', async () => {
    const small = createService({ maxBodyBytes: 64 });
    small.addResource({ name: 'Note' });
    const body = JSON.stringify({ Text: '' });
    const padded = JSON.stringify({ Text: 'y'.repeat(64 - body.length) });
    expect(Buffer.byteLength(padded)).toBe(64);
    const r = await call(small, 'POST', '/Note', { body: padded });
    expect(r.status).toBe(201);
  });
});

describe('a method the resource does not have is 405 with an Allow header', () => {
  test('DELETE on a GET/POST resource', async () => {
    const r = await call(service, 'DELETE', '/Lab.Log/_/unsafe=true');
    expect(r.status).toBe(405);
    expect(r.json.ErrorCode).toBe('MethodNotAllowed');
    expect(r.headers.allow).toBe('GET, POST');
  });

  test('POST on the read-only error records', async () => {
    const r = await call(service, 'POST', '/Service.Admin.Error', { body: { Id: 'x' } });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, DELETE, REPORT, HEAD');
  });

  test('a method no resource has', async () => {
    const r = await call(service, 'OPTIONS', '/Lab.Person');
    expect(r.status).toBe(405);
    expect(r.headers.allow.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'REPORT']);
  });
});

describe('views select a named part of a resource', () => {
  test('/Resource-View applies the view conditions and meta-conditions', async () => {
    const r = await call(service, 'GET', '/Lab.Person-Adults', { headers: RAW });
    expect(r.json.map((p: any) => p.Name)).toEqual(['Ada', 'Grace']);
  });

  test('the caller conditions are added to the view conditions', async () => {
    const r = await call(service, 'GET', '/Lab.Person-Adults/City=London', { headers: RAW });
    expect(r.json).toEqual([PEOPLE[0]]);
  });

  test('view names are case-insensitive', async () => {
    const r = await call(service, 'GET', '/lab.person-KIDS', { headers: RAW });
    expect(r.json.map((p: any) => p.Name)).toEqual(['Linus', 'Tim']);
  });

  test('the caller meta-conditions come after the view ones, so they win', async () => {
    const r = await call(service, 'GET', '/Lab.Person-Adults/_/order_desc=Name', { headers: RAW });
    expect(r.json.map((p: any) => p.Name)).toEqual(['Grace', 'Ada']);
  });

  test('a write through a view targets only the view', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person-Kids/City=London');
    expect(r.json.DeletedCount).toBe(1);
    expect(stored().map((p: any) => p.Id)).toEqual([1, 2, 3]);
  });

  test('an unknown view: 404 UnknownView', async () => {
    const r = await call(service, 'GET', '/Lab.Person-Seniors');
    expect(r.status).toBe(404);
    expect(r.json.ErrorCode).toBe('UnknownView');
    expect(r.json.Message).toMatch(/Adults/);
  });
});

describe('resources are found by full name or unique dot-suffix, case-insensitively', () => {
  test.each(['/Lab.Person', '/lab.person', '/LAB.PERSON', '/Person', '/person'])('%s finds Lab.Person', async (uri) => {
    const r = await call(service, 'REPORT', uri, { headers: RAW });
    expect(r.status).toBe(200);
    expect(r.text).toBe('4');
  });

  test('a suffix shared by two resources: 404 AmbiguousResource naming both', async () => {
    const r = await call(service, 'GET', '/tool');
    expect(r.status).toBe(404);
    expect(r.json.ErrorCode).toBe('AmbiguousResource');
    expect(r.json.Message).toMatch(/Lab\.Tool/);
    expect(r.json.Message).toMatch(/Shop\.Tool/);
  });

  test('the full name of one of them still works', async () => {
    const r = await call(service, 'GET', '/shop.tool', { headers: RAW });
    expect(r.json).toEqual([{ Name: 'Hammer' }]);
  });

  test('a suffix must end at a dot: a partial word is unknown', async () => {
    const r = await call(service, 'GET', '/erson');
    expect(r.status).toBe(404);
    expect(r.json.ErrorCode).toBe('UnknownResource');
  });

  test('an unknown name: 404 UnknownResource', async () => {
    const r = await call(service, 'GET', '/Lab.Robot');
    expect(r.status).toBe(404);
    expect(r.json.ErrorCode).toBe('UnknownResource');
  });
});

describe('Service.AvailableResource lists the resources', () => {
  test('a blank resource (/) is the listing', async () => {
    const blank = await call(service, 'GET', '/', { headers: RAW });
    const named = await call(service, 'GET', '/Service.AvailableResource', { headers: RAW });
    expect(blank.status).toBe(200);
    expect(blank.json).toEqual(named.json);
    expect(blank.json.map((r: any) => r.Name)).toEqual(
      expect.arrayContaining([
        'Lab.Person',
        'Lab.Tool',
        'Shop.Tool',
        'Service.Admin.Macro',
        'Service.Admin.Error',
        'Service.AvailableResource',
      ]),
    );
  });

  test('each entity has Name, Description, Methods, Kind and Views', async () => {
    const r = await call(service, 'GET', '/Service.AvailableResource/Name=Lab.Person', { headers: RAW });
    expect(r.json).toEqual([
      {
        Name: 'Lab.Person',
        Description: 'People in the lab',
        Methods: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'REPORT', 'HEAD'],
        Kind: 'EntityResource',
        Views: [
          { Name: 'Adults', Description: 'People aged 18 or more, by name' },
          { Name: 'Kids', Description: '' },
        ],
      },
    ]);
  });

  test('conditions filter the listing: Kind=EventResource gives events with no methods', async () => {
    const r = await call(service, 'GET', '/Service.AvailableResource/Kind=EventResource', { headers: RAW });
    expect(r.status).toBe(200);
    const names = r.json.map((e: any) => e.Name);
    expect(names).toEqual(expect.arrayContaining(['Lab.Person.Inserted', 'Lab.Person.Updated', 'Lab.Person.Deleted']));
    for (const e of r.json) {
      expect(e.Kind).toBe('EventResource');
      expect(e.Methods).toEqual([]);
    }
  });

  test('a restricted resource lists only its methods', async () => {
    const r = await call(service, 'GET', '/AvailableResource/Name=Lab.Log/select=Methods', { headers: RAW });
    expect(r.json).toEqual([{ Methods: ['GET', 'POST'] }]);
  });

  test('the listing is read-only', async () => {
    const r = await call(service, 'POST', '/', { body: { Name: 'X' } });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, REPORT, HEAD');
  });
});

describe('toOutput hides properties from output and from conditions alike', () => {
  function withHidden(): Service {
    const s = createService();
    s.addResource({
      name: 'Vault.Account',
      storage: new MemoryStorage([
        { User: 'ann', Pin: '1234' },
        { User: 'bob', Pin: '9999' },
      ]),
      toOutput: ({ Pin, ...rest }) => rest,
    });
    return s;
  }

  test('a GET never shows the hidden property', async () => {
    const r = await call(withHidden(), 'GET', '/Account', { headers: RAW });
    expect(r.json).toEqual([{ User: 'ann' }, { User: 'bob' }]);
  });

  test('a condition on the hidden property cannot tell its value', async () => {
    const s = withHidden();
    for (const uri of ['/Account/Pin=1234', '/Account/Pin=0000']) expect((await call(s, 'GET', uri)).status).toBe(204);
    expect((await call(s, 'GET', '/Account/Pin=null', { headers: RAW })).json).toHaveLength(2);
  });

  test('safepost matches on what clients see: a hidden property cannot be probed by matching', async () => {
    const s = withHidden();
    const guess = await call(s, 'POST', '/Account/_/safepost=Pin', { body: { Pin: '1234', User: 'eve' } });
    expect(guess.json).toMatchObject({ InsertedCount: 1, UpdatedCount: 0 });
  });

  test('writes target what clients see: PATCH by the hidden property matches nothing', async () => {
    const s = withHidden();
    const r = await call(s, 'PATCH', '/Account/Pin=1234', { body: { User: 'eve' } });
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ ErrorCode: 'NotFound' });
    const patched = await call(s, 'PATCH', '/Account/User=ann', { body: { User: 'ann2' } });
    expect(patched.json).toMatchObject({ UpdatedCount: 1, Data: [{ User: 'ann2' }] });
  });
});

describe('request bodies that break off', () => {
  test('a body stream that fails mid-way (the client left) is a 400 NoDataSource, not a 500', async () => {
    const s = createService();
    s.addResource({ name: 'Thing' });
    async function* broken() {
      yield Buffer.from('{"A":');
      throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    }
    const res = await s.handle({ method: 'POST', uri: '/Thing', headers: { 'content-type': 'application/json' }, body: broken() });
    expect(res.status).toBe(400);
    expect(JSON.parse(String(res.body)).ErrorCode).toBe('NoDataSource');
  });
});
