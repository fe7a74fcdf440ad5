import { createService, MemoryStorage, type Service, type Storage } from '@resourcery/core';
import { type SelectQuery } from '@resourcery/core/storage';
import { bodyText, call as callService, RAW, type CallInit } from './handle-support';

/** Macros: Service.Admin.Macro (SPEC 2.1), the rewrite rules of SPEC 4.5 and DESIGN 12. */

const CREW = [
  { Name: 'Ripley', Role: 'Officer', Age: 30, Ship: 'Nostromo' },
  { Name: 'Dallas', Role: 'Captain', Age: 42, Ship: 'Nostromo' },
  { Name: 'Bishop', Role: 'Android', Age: 5, Ship: 'Sulaco' },
  { Name: 'Hicks', Role: 'Corporal', Age: 28, Ship: 'Sulaco' },
  { Name: 'Newt', Role: 'Civilian', Age: 10, Ship: 'Sulaco' },
];

function call(method: string, uri: string, init: CallInit = {}) {
  return callService(service, method, uri, init);
}

async function names(uri: string, init: { body?: unknown; headers?: Record<string, string>; method?: string } = {}): Promise<string[]> {
  const r = await call(init.method ?? 'GET', uri, { body: init.body, headers: { ...RAW, ...init.headers } });
  if (r.status === 204) return [];
  expect(r.status).toBe(200);
  return r.json.map((e: { Name: string }) => e.Name);
}

async function saveMacro(macro: Record<string, unknown>): Promise<void> {
  const r = await call('POST', '/Service.Admin.Macro', { body: macro });
  expect(r.json?.ErrorCode).toBeUndefined();
  expect(r.status).toBe(201);
}

async function macroCount(): Promise<number> {
  return JSON.parse(await bodyText((await service.handle({ method: 'REPORT', uri: '/Service.Admin.Macro', headers: RAW })).body));
}

function crewNames(): string[] {
  return crew.all().map((e) => e.Name as string);
}

/** A storage that remembers the conditions of every select, to observe their order. */
function recording(inner: MemoryStorage, seen: string[][]): Storage {
  return {
    select: (q: SelectQuery) => {
      seen.push(q.conditions.map((c) => c.text));
      return inner.select(q);
    },
    write: (batch) => inner.write(batch),
  };
}

let service: Service;
let crew: MemoryStorage;
let selects: string[][];

beforeEach(() => {
  service = createService();
  crew = new MemoryStorage(CREW.map((c) => ({ ...c })));
  selects = [];
  service.addResource({
    name: 'Fleet.Crew',
    storage: recording(crew, selects),
    views: [
      { name: 'Adults', conditions: 'Age>=18' },
      { name: 'Young', conditions: 'Age<18' },
    ],
  });
});

describe('Service.Admin.Macro holds macros: create, read, update, delete', () => {
  test('POST stores a macro with every property, defaults filled in: 201', async () => {
    const r = await call('POST', '/Service.Admin.Macro', { body: { Name: 'adults', Uri: '/Fleet.Crew-Adults' } });
    expect(r.status).toBe(201);
    expect(r.json.Data).toEqual([
      { Name: 'adults', Uri: '/Fleet.Crew-Adults', Body: null, Headers: null, OverwriteBody: false, OverwriteHeaders: false },
    ]);
  });

  test('GET lists macros and filters them like any resource', async () => {
    await saveMacro({ Name: 'adults', Uri: '/Fleet.Crew-Adults' });
    await saveMacro({ Name: 'sulaco', Uri: '/Fleet.Crew/Ship=Sulaco' });
    expect(await names('/Service.Admin.Macro')).toEqual(['adults', 'sulaco']);
    expect(await names('/Macro/Uri=/Fleet.Crew-Adults'.replace('/Fleet', '%2FFleet'))).toEqual(['adults']);
  });

  test('a Uri without a leading slash is stored with one', async () => {
    await saveMacro({ Name: 'sulaco', Uri: 'Fleet.Crew/Ship=Sulaco' });
    expect((await call('GET', '/Macro/Name=sulaco', { headers: RAW })).json[0].Uri).toBe('/Fleet.Crew/Ship=Sulaco');
  });

  test('PATCH changes a macro', async () => {
    await saveMacro({ Name: 'adults', Uri: '/Fleet.Crew-Adults' });
    const r = await call('PATCH', '/Service.Admin.Macro/Name=adults', { body: { Uri: '/Fleet.Crew-Young' } });
    expect(r.status).toBe(200);
    expect(r.json.Data[0]).toMatchObject({ Name: 'adults', Uri: '/Fleet.Crew-Young' });
  });

  test('a macro may be renamed to its own name in another case', async () => {
    await saveMacro({ Name: 'adults', Uri: '/Fleet.Crew-Adults' });
    const r = await call('PATCH', '/Service.Admin.Macro/Name=adults', { body: { Name: 'Adults' } });
    expect(r.status).toBe(200);
    expect(await names('/Service.Admin.Macro')).toEqual(['Adults']);
  });

  test('PUT inserts with the Name from the condition, then updates', async () => {
    const inserted = await call('PUT', '/Service.Admin.Macro/Name=young', { body: { Uri: '/Fleet.Crew-Young' } });
    expect(inserted.status).toBe(201);
    expect(inserted.json.Data[0]).toMatchObject({ Name: 'young', Uri: '/Fleet.Crew-Young' });
    const updated = await call('PUT', '/Service.Admin.Macro/Name=young', { body: { Uri: '/Fleet.Crew/Age<10' } });
    expect(updated.status).toBe(200);
    expect(await macroCount()).toBe(1);
  });

  test('DELETE removes a macro', async () => {
    await saveMacro({ Name: 'adults', Uri: '/Fleet.Crew-Adults' });
    expect((await call('DELETE', '/Service.Admin.Macro/Name=adults')).json.DeletedCount).toBe(1);
    expect(await macroCount()).toBe(0);
  });
});

describe('a macro is checked when it is saved: 400 InvalidResourceEntity naming the property, nothing stored', () => {
  beforeEach(() => saveMacro({ Name: 'adults', Uri: '/Fleet.Crew-Adults' }));

  test.each([
    ['a duplicate name, in another case', { Name: 'ADULTS', Uri: '/Fleet.Crew' }, 'Name'],
    ['a name with a space', { Name: 'grown ups', Uri: '/Fleet.Crew' }, 'Name'],
    ['a name with a dash', { Name: 'grown-ups', Uri: '/Fleet.Crew' }, 'Name'],
    ['an empty name', { Name: '', Uri: '/Fleet.Crew' }, 'Name'],
    ['no name', { Uri: '/Fleet.Crew' }, 'Name'],
    ['a name that is not a string', { Name: 7, Uri: '/Fleet.Crew' }, 'Name'],
    ['no Uri', { Name: 'nowhere' }, 'Uri'],
    ['a Uri with too many parts', { Name: 'long', Uri: '/Fleet.Crew/_/_/extra' }, 'Uri'],
    ['a Uri with a bad condition operator', { Name: 'bad', Uri: '/Fleet.Crew/Age>>3' }, 'Uri'],
    ['a Uri with an unknown meta-condition', { Name: 'bad', Uri: '/Fleet.Crew/_/colour=red' }, 'Uri'],
    ['a Uri with bad percent-encoding', { Name: 'bad', Uri: '/Fleet.Crew/Name=%E0%A4%A' }, 'Uri'],
    ['a Uri that calls the macro itself', { Name: 'me', Uri: '/$ME/Age>3' }, 'Uri'],
    ['an Authorization header', { Name: 'sneaky', Uri: '/Fleet.Crew', Headers: { Authorization: 'apikey borrowed' } }, 'Headers'],
    [
      'an authorization header in lower case',
      { Name: 'sneaky', Uri: '/Fleet.Crew', Headers: { authorization: 'apikey borrowed' } },
      'Headers',
    ],
    [
      'an Authorization header with a trailing space',
      { Name: 'sneaky', Uri: '/Fleet.Crew', Headers: { 'authorization ': 'apikey borrowed' } },
      'Headers',
    ],
    [
      'an Authorization header with a leading space',
      { Name: 'sneaky', Uri: '/Fleet.Crew', Headers: { ' Authorization': 'apikey borrowed' } },
      'Headers',
    ],
    ['a Cookie header', { Name: 'sneaky', Uri: '/Fleet.Crew', Headers: { Cookie: 'session=borrowed' } }, 'Headers'],
    [
      'a Proxy-Authorization header',
      { Name: 'sneaky', Uri: '/Fleet.Crew', Headers: { 'Proxy-Authorization': 'Basic Ym9ycm93ZWQ=' } },
      'Headers',
    ],
    ['an X-Api-Key header', { Name: 'sneaky', Uri: '/Fleet.Crew', Headers: { 'X-Api-Key': 'borrowed' } }, 'Headers'],
    ['a header name that is not a token', { Name: 'h', Uri: '/Fleet.Crew', Headers: { 'X Tag': 'a' } }, 'Headers'],
    ['one header twice, in two cases', { Name: 'h', Uri: '/Fleet.Crew', Headers: { Accept: 'json', 'accept ': 'excel' } }, 'Headers'],
    ['Headers that are not an object', { Name: 'h', Uri: '/Fleet.Crew', Headers: ['Accept: json'] }, 'Headers'],
    ['a Body that is not an object or array of objects', { Name: 'b', Uri: '/Fleet.Crew', Body: [1, 2] }, 'Body'],
    ['OverwriteBody that is not a boolean', { Name: 'o', Uri: '/Fleet.Crew', OverwriteBody: 'yes' }, 'OverwriteBody'],
    ['an unknown property', { Name: 'm', Uri: '/Fleet.Crew', Method: 'DELETE' }, 'Method'],
  ])('%s', async (_what, macro, property) => {
    const r = await call('POST', '/Service.Admin.Macro', { body: macro });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(Object.keys(r.json.Data)).toEqual([property]);
    expect(await macroCount()).toBe(1);
  });

  test('two macros with the same name in one POST: refused, neither stored', async () => {
    const r = await call('POST', '/Service.Admin.Macro', {
      body: [
        { Name: 'twin', Uri: '/Fleet.Crew' },
        { Name: 'TWIN', Uri: '/Fleet.Crew' },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(Object.keys(r.json.Data)).toEqual(['Name']);
    expect(await macroCount()).toBe(1);
  });

  test('two requests saving the same name at once: one is stored, the other refused', async () => {
    const replies = await Promise.all([
      call('POST', '/Service.Admin.Macro', { body: { Name: 'race', Uri: '/Fleet.Crew' } }),
      call('POST', '/Service.Admin.Macro', { body: { Name: 'RACE', Uri: '/Fleet.Crew-Adults' } }),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(await macroCount()).toBe(2);
  });

  test('renaming several macros to one name at once is refused', async () => {
    await saveMacro({ Name: 'young', Uri: '/Fleet.Crew-Young' });
    const r = await call('PATCH', '/Service.Admin.Macro/_/unsafe=true', { body: { Name: 'same' } });
    expect(r.status).toBe(400);
    expect(await names('/Service.Admin.Macro')).toEqual(['adults', 'young']);
  });

  test('a valid macro in the same array as a bad one is not stored either', async () => {
    const r = await call('POST', '/Service.Admin.Macro', {
      body: [
        { Name: 'fine', Uri: '/Fleet.Crew' },
        { Name: 'bad', Uri: '/$bad' },
      ],
    });
    expect(r.status).toBe(400);
    expect(await macroCount()).toBe(1);
  });

  test('URI is accepted as an alias of Uri and stored as Uri', async () => {
    const r = await call('POST', '/Service.Admin.Macro', { body: { Name: 'sulaco', URI: '/Fleet.Crew/Ship=Sulaco' } });
    expect(r.status).toBe(201);
    expect(r.json.Data[0]).toMatchObject({ Name: 'sulaco', Uri: '/Fleet.Crew/Ship=Sulaco' });
    expect(r.json.Data[0]).not.toHaveProperty('URI');
    expect(await names('/$sulaco')).toEqual(['Bishop', 'Hicks', 'Newt']);
  });

  test('a PATCH that sends URI replaces the stored Uri', async () => {
    const r = await call('PATCH', '/Service.Admin.Macro/Name=adults', { body: { URI: '/Fleet.Crew-Young' } });
    expect(r.json.Data[0].Uri).toBe('/Fleet.Crew-Young');
    expect(await names('/$adults')).toEqual(['Bishop', 'Newt']);
  });

  test('Headers values are stored as strings', async () => {
    await saveMacro({ Name: 'typed', Uri: '/Fleet.Crew', Headers: { 'X-Priority': 5, 'X-Urgent': true, 'X-Tag': 'a' } });
    const r = await call('GET', '/Macro/Name=typed', { headers: RAW });
    expect(r.json[0].Headers).toEqual({ 'X-Priority': '5', 'X-Urgent': 'true', 'X-Tag': 'a' });
  });

  test('a Uri naming a resource that does not exist yet is accepted', async () => {
    await saveMacro({ Name: 'later', Uri: '/Fleet.Ship' });
    expect((await call('GET', '/$later')).json.ErrorCode).toBe('UnknownResource');
  });
});

describe('rule 1: the resource in the macro Uri is used', () => {
  test('/$name reads the macro resource', async () => {
    await saveMacro({ Name: 'sulaco', Uri: '/Fleet.Crew/Ship=Sulaco' });
    expect(await names('/$sulaco')).toEqual(['Bishop', 'Hicks', 'Newt']);
  });

  test('macro names are case-insensitive in calls', async () => {
    await saveMacro({ Name: 'Sulaco', Uri: '/Fleet.Crew/Ship=Sulaco' });
    expect(await names('/$SULACO')).toEqual(['Bishop', 'Hicks', 'Newt']);
  });

  test('an unknown macro: 404 UnknownMacro', async () => {
    const r = await call('GET', '/$nobody');
    expect(r.status).toBe(404);
    expect(r.json.ErrorCode).toBe('UnknownMacro');
  });
});

describe('rule 2: the method of the call is kept', () => {
  beforeEach(() => saveMacro({ Name: 'newt', Uri: '/Fleet.Crew/Name=Newt' }));

  test('REPORT counts, HEAD answers without a body', async () => {
    expect((await call('REPORT', '/$newt', { headers: RAW })).json).toBe(1);
    const head = await call('HEAD', '/$newt');
    expect(head.status).toBe(200);
    expect(head.body).toBeNull();
  });

  test('PATCH updates through the macro', async () => {
    expect((await call('PATCH', '/$newt', { body: { Age: 11 } })).json.UpdatedCount).toBe(1);
    expect(crew.all().find((e) => e.Name === 'Newt')!.Age).toBe(11);
  });

  test('DELETE deletes through the macro', async () => {
    expect((await call('DELETE', '/$newt')).json.DeletedCount).toBe(1);
    expect(crewNames()).not.toContain('Newt');
  });
});

describe('rule 3: the macro view is used unless the caller gives one', () => {
  beforeEach(() => saveMacro({ Name: 'adults', Uri: '/Fleet.Crew-Adults' }));

  test('the macro view applies', async () => {
    expect(await names('/$adults')).toEqual(['Ripley', 'Dallas', 'Hicks']);
  });

  test('the caller view replaces it', async () => {
    expect(await names('/$adults-Young')).toEqual(['Bishop', 'Newt']);
  });

  test('a view given to a macro with no view applies', async () => {
    await saveMacro({ Name: 'sulaco', Uri: '/Fleet.Crew/Ship=Sulaco' });
    expect(await names('/$sulaco-Adults')).toEqual(['Hicks']);
  });

  test('an unknown caller view: 404 UnknownView', async () => {
    expect((await call('GET', '/$adults-Elders')).json.ErrorCode).toBe('UnknownView');
  });
});

describe('rule 4: conditions are the macro ones, then the caller ones', () => {
  test('both apply, macro conditions first', async () => {
    await saveMacro({ Name: 'sulaco', Uri: '/Fleet.Crew/Ship=Sulaco&Age>1' });
    selects.length = 0;
    expect(await names('/$sulaco/Age<20&Name!=Bishop')).toEqual(['Newt']);
    expect(selects).toEqual([['Ship=Sulaco', 'Age>1', 'Age<20', 'Name!=Bishop']]);
  });
});

describe('rule 5: meta-conditions are the macro ones, then the caller ones; a repeated name takes the last', () => {
  beforeEach(() => saveMacro({ Name: 'roster', Uri: '/Fleet.Crew/_/order_asc=Name&limit=3' }));

  test('macro limit with caller offset: limit=3&offset=1', async () => {
    expect(await names('/$roster/_/offset=1')).toEqual(['Dallas', 'Hicks', 'Newt']);
  });

  test('the caller limit overrides the macro limit', async () => {
    expect(await names('/$roster/_/limit=1')).toEqual(['Bishop']);
  });

  test('the caller order overrides the macro order', async () => {
    expect(await names('/$roster/_/order_desc=Age')).toEqual(['Dallas', 'Ripley', 'Hicks']);
  });
});

describe('rule 6: the macro body stands in for a missing body and replaces one only with OverwriteBody', () => {
  const VASQUEZ = { Name: 'Vasquez', Role: 'Private', Age: 29, Ship: 'Sulaco' };
  const HUDSON = { Name: 'Hudson', Role: 'Private', Age: 27, Ship: 'Sulaco' };

  test('the caller has no body: the macro body is used', async () => {
    await saveMacro({ Name: 'recruit', Uri: '/Fleet.Crew', Body: VASQUEZ });
    const r = await call('POST', '/$recruit');
    expect(r.status).toBe(201);
    expect(crew.all().at(-1)).toEqual(VASQUEZ);
  });

  test('the caller has a body: it is kept', async () => {
    await saveMacro({ Name: 'recruit', Uri: '/Fleet.Crew', Body: VASQUEZ });
    await call('POST', '/$recruit', { body: HUDSON });
    expect(crew.all().at(-1)).toEqual(HUDSON);
  });

  test('OverwriteBody: the macro body replaces the caller body', async () => {
    await saveMacro({ Name: 'recruit', Uri: '/Fleet.Crew', Body: [VASQUEZ], OverwriteBody: true });
    await call('POST', '/$recruit', { body: HUDSON });
    expect(crewNames().slice(5)).toEqual(['Vasquez']);
  });

  test('the macro body is JSON whatever Content-Type the caller sent without a body', async () => {
    await saveMacro({ Name: 'recruit', Uri: '/Fleet.Crew', Body: VASQUEZ });
    const r = await call('POST', '/$recruit', { headers: { 'content-type': 'text/csv' } });
    expect(r.status).toBe(201);
  });
});

describe('rule 7: macro headers fill in, and replace the caller ones only with OverwriteHeaders', () => {
  test('a macro with Accept: application/json;raw=true gives the bare array', async () => {
    await saveMacro({ Name: 'bare', Uri: '/Fleet.Crew/Name=Hicks', Headers: { Accept: 'application/json;raw=true' } });
    const r = await call('GET', '/$bare');
    expect(r.json).toEqual([CREW[3]]);
  });

  test('the caller header wins over the macro one', async () => {
    await saveMacro({ Name: 'bare', Uri: '/Fleet.Crew/Name=Hicks', Headers: { Accept: 'application/json;raw=true' } });
    const r = await call('GET', '/$bare', { headers: { Accept: 'application/json' } });
    expect(r.json).toMatchObject({ Status: 'success', Data: [CREW[3]] });
  });

  test.each(['*/*', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'])(
    'an Accept that names none of our types (%s) states no preference: the macro Accept fills in',
    async (accept) => {
      await saveMacro({ Name: 'bare', Uri: '/Fleet.Crew/Name=Hicks', Headers: { Accept: 'application/json;raw=true' } });
      const r = await call('GET', '/$bare', { headers: { Accept: accept } });
      expect(r.json).toEqual([CREW[3]]);
    },
  );

  test('OverwriteHeaders: the macro header replaces the caller one', async () => {
    await saveMacro({
      Name: 'bare',
      Uri: '/Fleet.Crew/Name=Hicks',
      Headers: { ACCEPT: 'application/json;raw=true' },
      OverwriteHeaders: true,
    });
    const r = await call('GET', '/$bare', { headers: { Accept: 'application/json' } });
    expect(r.json).toEqual([CREW[3]]);
  });
});

describe('rule 8: each call carries its own authentication', () => {
  test('a macro call without a key is 401 even though the macro exists', async () => {
    service = createService({ apiKeys: [{ key: 'k' }] });
    service.addResource({ name: 'Fleet.Crew', storage: crew });
    const key = { authorization: 'apikey k' };
    expect((await call('POST', '/Service.Admin.Macro', { body: { Name: 'all', Uri: '/Fleet.Crew' }, headers: key })).status).toBe(201);
    expect((await call('GET', '/$all')).status).toBe(401);
    expect((await call('GET', '/$all', { headers: key })).status).toBe(200);
  });
});

describe('rule 9: macros may call macros; loops are stopped', () => {
  test('a macro calling a macro merges both, outer conditions after inner ones', async () => {
    await saveMacro({ Name: 'adults', Uri: '/Fleet.Crew-Adults/Ship=Sulaco' });
    await saveMacro({ Name: 'corporals', Uri: '/$adults/Role=Corporal/limit=5' });
    selects.length = 0;
    expect(await names('/$corporals/Age<40')).toEqual(['Hicks']);
    expect(selects[0]).toEqual(['Age>=18', 'Ship=Sulaco', 'Role=Corporal', 'Age<40']);
  });

  test('the headers of every macro on the way fill in', async () => {
    await saveMacro({ Name: 'inner', Uri: '/Fleet.Crew/Name=Newt', Headers: { Accept: 'application/json;raw=true' } });
    await saveMacro({ Name: 'outer', Uri: '/$inner' });
    expect((await call('GET', '/$outer')).json).toEqual([CREW[4]]);
  });

  test('an indirect loop (a -> b -> a): 508 InfiniteLoopDetected', async () => {
    await saveMacro({ Name: 'ping', Uri: '/$pong' });
    await saveMacro({ Name: 'pong', Uri: '/$ping/Age>1' });
    for (const uri of ['/$ping', '/$pong']) {
      const r = await call('GET', uri);
      expect([uri, r.status, r.json.ErrorCode]).toEqual([uri, 508, 'InfiniteLoopDetected']);
    }
  });

  test('a direct loop that reached storage another way: 508 InfiniteLoopDetected', async () => {
    const self = { Name: 'self', Uri: '/$self', Body: null, Headers: null, OverwriteBody: false, OverwriteHeaders: false };
    service = createService({ adminStorage: (name) => new MemoryStorage(name === 'Service.Admin.Macro' ? [self] : []) });
    const r = await call('GET', '/$self');
    expect(r.status).toBe(508);
    expect(r.json.ErrorCode).toBe('InfiniteLoopDetected');
  });

  test('a chain of 16 macros works; a 17th is stopped with 508', async () => {
    await saveMacro({ Name: 'm16', Uri: '/Fleet.Crew/Name=Dallas' });
    for (let i = 15; i >= 0; i--) await saveMacro({ Name: `m${i}`, Uri: `/$m${i + 1}` });
    expect(await names('/$m1')).toEqual(['Dallas']);
    expect((await call('GET', '/$m0')).status).toBe(508);
  });
});

describe('PATCH and DELETE of many through a macro still need unsafe=true', () => {
  beforeEach(() => saveMacro({ Name: 'nostromo', Uri: '/Fleet.Crew/Ship=Nostromo' }));

  test('without unsafe: 400 AmbiguousMatch and nothing changes', async () => {
    expect((await call('PATCH', '/$nostromo', { body: { Ship: 'Narcissus' } })).json.ErrorCode).toBe('AmbiguousMatch');
    expect((await call('DELETE', '/$nostromo')).json.ErrorCode).toBe('AmbiguousMatch');
    expect(crew.all()).toEqual(CREW);
  });

  test('with unsafe=true from the caller', async () => {
    expect((await call('PATCH', '/$nostromo/_/unsafe=true', { body: { Role: 'Crew' } })).json.UpdatedCount).toBe(2);
    expect(
      crew
        .all()
        .filter((e) => e.Role === 'Crew')
        .map((e) => e.Name),
    ).toEqual(['Ripley', 'Dallas']);
    expect((await call('DELETE', '/$nostromo/Role=Crew/unsafe=true')).json.DeletedCount).toBe(2);
    expect(crewNames()).toEqual(['Bishop', 'Hicks', 'Newt']);
  });

  test('with unsafe=true in the macro', async () => {
    await saveMacro({ Name: 'purge', Uri: '/Fleet.Crew/Ship=Sulaco/unsafe=true' });
    expect((await call('DELETE', '/$purge')).json.DeletedCount).toBe(3);
  });
});

describe('a changed macro takes effect at once (the rewrite cache is cleared)', () => {
  test('after PATCH the new Uri is used', async () => {
    await saveMacro({ Name: 'pick', Uri: '/Fleet.Crew/Name=Ripley' });
    expect(await names('/$pick')).toEqual(['Ripley']);
    await call('PATCH', '/Macro/Name=pick', { body: { Uri: '/Fleet.Crew/Name=Dallas' } });
    expect(await names('/$pick')).toEqual(['Dallas']);
  });

  test('after DELETE the macro is unknown', async () => {
    await saveMacro({ Name: 'pick', Uri: '/Fleet.Crew/Name=Ripley' });
    expect(await names('/$pick')).toEqual(['Ripley']);
    await call('DELETE', '/Macro/Name=pick');
    expect((await call('GET', '/$pick')).json.ErrorCode).toBe('UnknownMacro');
  });

  test('a macro created after a failed call is found', async () => {
    expect((await call('GET', '/$pick')).status).toBe(404);
    await saveMacro({ Name: 'pick', Uri: '/Fleet.Crew/Name=Hicks' });
    expect(await names('/$pick')).toEqual(['Hicks']);
  });

  test('a changed inner macro changes the outer one', async () => {
    await saveMacro({ Name: 'inner', Uri: '/Fleet.Crew/Name=Ripley' });
    await saveMacro({ Name: 'outer', Uri: '/$inner' });
    expect(await names('/$outer')).toEqual(['Ripley']);
    await call('PUT', '/Macro/Name=inner', { body: { Uri: '/Fleet.Crew/Name=Newt' } });
    expect(await names('/$outer')).toEqual(['Newt']);
  });
});

describe('macros on a storage that hands out fresh objects on every select (like a database)', () => {
  test('a macro can be edited and keeps its name', async () => {
    const inner = new MemoryStorage();
    const fresh: Storage = {
      select: async (q: SelectQuery) => {
        const r = await inner.select(q);
        return { ...r, entities: [...(r.entities as Iterable<Record<string, unknown>>)].map((e) => ({ ...e })) };
      },
      write: (batch) =>
        inner.write({
          ...batch,
          update: batch.update?.map((u) => ({
            target: { entity: inner.all().find((e) => e.Name === u.target.entity.Name)! },
            value: u.value,
          })),
        }),
    };
    const db = createService({ adminStorage: (name) => (name === 'Service.Admin.Macro' ? fresh : undefined) });
    db.addResource({ name: 'Fleet.Crew', storage: new MemoryStorage(CREW.map((c) => ({ ...c }))) });
    expect((await callService(db, 'POST', '/Service.Admin.Macro', { body: { Name: 'm', Uri: '/Fleet.Crew/Age>40' } })).status).toBe(201);
    const patched = await callService(db, 'PATCH', '/Service.Admin.Macro/Name=m', { body: { Uri: '/Fleet.Crew/Age<10' } });
    expect(patched.json?.ErrorCode).toBeUndefined();
    expect(patched.status).toBe(200);
    const r = await callService(db, 'GET', '/$m', { headers: RAW });
    expect(r.json.map((e: { Name: string }) => e.Name)).toEqual(['Bishop']);
  });
});

describe('a macro changed while a request is loading the macros is in force for the next request', () => {
  /** Macro storage whose next select reads its snapshot at once but answers only when released. */
  class GatedStorage extends MemoryStorage {
    private gate: Promise<void> | null = null;
    private open: () => void = () => undefined;
    readonly loading = { started: false };

    arm(): void {
      this.gate = new Promise((resolve) => (this.open = resolve));
      this.loading.started = false;
    }

    release(): void {
      this.open();
    }

    override async select(query: SelectQuery) {
      const result = await super.select(query);
      const gate = this.gate;
      if (gate === null) return result;
      this.gate = null;
      this.loading.started = true;
      await gate;
      return result;
    }
  }

  test('the load that the write overtook answers its own request but is not cached', async () => {
    const macros = new GatedStorage();
    const db = createService({ adminStorage: (name) => (name === 'Service.Admin.Macro' ? macros : undefined) });
    db.addResource({ name: 'Crew', storage: new MemoryStorage(CREW) });
    expect((await callService(db, 'POST', '/Service.Admin.Macro', { body: { Name: 'm', Uri: '/Crew/Age>40' } })).status).toBe(201);

    macros.arm();
    const during = callService(db, 'GET', '/$m', { headers: RAW });
    while (!macros.loading.started) await new Promise((r) => setImmediate(r));
    const patched = await callService(db, 'PATCH', '/Service.Admin.Macro/Name=m', { body: { Uri: '/Crew/Age<8' } });
    expect(patched.status).toBe(200);
    macros.release();
    expect((await during).json.map((e: { Name: string }) => e.Name)).toEqual(['Dallas']);

    const after = await callService(db, 'GET', '/$m', { headers: RAW });
    expect(after.json.map((e: { Name: string }) => e.Name)).toEqual(['Bishop']);
  });
});
