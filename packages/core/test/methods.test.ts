import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { call, PEOPLE, PERSON_SCHEMA, RAW } from './handle-support';

/** Behaviour of each method through `service.handle` (DESIGN 4), with no HTTP in between. */

let service: Service;
let people: MemoryStorage;

function stored(): unknown[] {
  return [...people.all()];
}

beforeEach(() => {
  service = createService();
  people = new MemoryStorage(PEOPLE.map((p) => ({ ...p })));
  service.addResource({ name: 'Lab.Person', schema: PERSON_SCHEMA, storage: people });
});

describe('GET returns the selected entities in the success envelope', () => {
  test('the envelope has the keys Status, Data, DataCount, TimeElapsedMs in that order', async () => {
    const r = await call(service, 'GET', '/Lab.Person/City=London');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(r.json)).toEqual(['Status', 'Data', 'DataCount', 'TimeElapsedMs']);
    expect(r.json.Status).toBe('success');
    expect(r.json.Data).toEqual([PEOPLE[0], PEOPLE[3]]);
    expect(r.json.DataCount).toBe(2);
    expect(typeof r.json.TimeElapsedMs).toBe('number');
    expect(r.json.TimeElapsedMs).toBeGreaterThanOrEqual(0);
  });

  test('one entity is still an array', async () => {
    const r = await call(service, 'GET', '/Lab.Person/Id=3');
    expect(r.json.Data).toEqual([PEOPLE[2]]);
    expect(r.json.DataCount).toBe(1);
  });

  test('Accept: application/json;raw=true gives the bare array', async () => {
    const r = await call(service, 'GET', '/Lab.Person/Age<18', { headers: RAW });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([PEOPLE[1], PEOPLE[3]]);
  });

  test('other media-type parameters next to raw are ignored', async () => {
    const r = await call(service, 'GET', '/Lab.Person/Id=1', { headers: { Accept: 'application/json; charset=utf-8; raw=true' } });
    expect(r.json).toEqual([PEOPLE[0]]);
  });

  test('nothing found is 204 with no body', async () => {
    const r = await call(service, 'GET', '/Lab.Person/Age>100');
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
  });
});

describe('REPORT counts what the GET would select', () => {
  test('the envelope is Status, Count, TimeElapsedMs', async () => {
    const r = await call(service, 'REPORT', '/Lab.Person/Age>=18');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['Status', 'Count', 'TimeElapsedMs']);
    expect(r.json).toMatchObject({ Status: 'success', Count: 2 });
  });

  test('raw gives the bare number', async () => {
    const r = await call(service, 'REPORT', '/Lab.Person/City=London', { headers: RAW });
    expect(r.text).toBe('2');
  });

  test('the count honours limit and offset like the GET', async () => {
    const r = await call(service, 'REPORT', '/Lab.Person/_/offset=1&limit=2', { headers: RAW });
    expect(r.text).toBe('2');
  });

  test('a count of zero is still 200', async () => {
    const r = await call(service, 'REPORT', '/Lab.Person/Age>100', { headers: RAW });
    expect(r.status).toBe(200);
    expect(r.text).toBe('0');
  });
});

describe('HEAD answers like GET without a body', () => {
  test('200 when the GET finds entities, with no body', async () => {
    const r = await call(service, 'HEAD', '/Lab.Person/City=London');
    expect(r.status).toBe(200);
    expect(r.body).toBeNull();
  });

  test('the headers are those the GET would send', async () => {
    const head = await call(service, 'HEAD', '/Lab.Person/City=London');
    const get = await call(service, 'GET', '/Lab.Person/City=London');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers['content-type']).toMatch(/^application\/json/);
  });

  test('204 when the GET finds nothing', async () => {
    const r = await call(service, 'HEAD', '/Lab.Person/City=Paris');
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
  });
});

describe('POST inserts one entity or an array', () => {
  test('one entity: 201 with InsertedCount and the inserted entity', async () => {
    const r = await call(service, 'POST', '/Lab.Person', { body: { Id: 5, Name: 'Hedy', Age: 30 } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json)).toEqual(['Status', 'Data', 'DataCount', 'InsertedCount', 'TimeElapsedMs']);
    expect(r.json).toMatchObject({ Status: 'success', Data: [{ Id: 5, Name: 'Hedy', Age: 30 }], DataCount: 1, InsertedCount: 1 });
    expect(stored()).toHaveLength(5);
    expect(stored()[4]).toEqual({ Id: 5, Name: 'Hedy', Age: 30 });
  });

  test('an array: every entity inserted, appended in order', async () => {
    const r = await call(service, 'POST', '/Lab.Person', {
      body: [
        { Id: 5, Name: 'Hedy', Age: 30 },
        { Id: 6, Name: 'Alan', Age: 41 },
      ],
    });
    expect(r.status).toBe(201);
    expect(r.json.InsertedCount).toBe(2);
    expect(r.json.Data.map((p: { Name: string }) => p.Name)).toEqual(['Hedy', 'Alan']);
    expect(stored().slice(4)).toEqual([
      { Id: 5, Name: 'Hedy', Age: 30 },
      { Id: 6, Name: 'Alan', Age: 41 },
    ]);
  });

  test('an empty array inserts nothing: 200 with InsertedCount 0', async () => {
    const r = await call(service, 'POST', '/Lab.Person', { body: [] });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ Data: [], DataCount: 0, InsertedCount: 0 });
    expect(stored()).toHaveLength(4);
  });

  test('raw output is the array of inserted entities', async () => {
    const r = await call(service, 'POST', '/Lab.Person', { body: { Name: 'Hedy', Age: 30 }, headers: RAW });
    expect(r.status).toBe(201);
    expect(r.json).toEqual([{ Name: 'Hedy', Age: 30 }]);
  });
});

describe('PUT inserts when nothing matches and updates exactly one match', () => {
  test('no match: 201, the properties fixed by = conditions are filled in', async () => {
    const r = await call(service, 'PUT', '/Lab.Person/Id=10', { body: { Name: 'Barbara', Age: 50 } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ InsertedCount: 1, Data: [{ Id: 10, Name: 'Barbara', Age: 50 }] });
    expect(stored()[4]).toEqual({ Id: 10, Name: 'Barbara', Age: 50 });
  });

  test('the filled property takes the schema spelling whatever case the locator uses', async () => {
    const r = await call(service, 'PUT', '/Lab.Person/id=11&CITY=Oslo', { body: { Name: 'Kristen', Age: 40 } });
    expect(r.status).toBe(201);
    expect(stored()[4]).toEqual({ Id: 11, City: 'Oslo', Name: 'Kristen', Age: 40 });
  });

  test('only = conditions fill values: <, >, != and the like fix no value', async () => {
    const r = await call(service, 'PUT', '/Lab.Person/Id>100&City!=Rome&Age<=99&Name>=A', { body: { Name: 'Hedy', Age: 20 } });
    expect(r.status).toBe(201);
    expect(stored()[4]).toEqual({ Name: 'Hedy', Age: 20 });
  });

  test('a property the body gives is not overwritten by the condition', async () => {
    const r = await call(service, 'PUT', '/Lab.Person/Name=Barbara', { body: { Name: 'Barbara', Age: 50, City: 'Boston' } });
    expect(r.status).toBe(201);
    expect(stored()[4]).toEqual({ Name: 'Barbara', Age: 50, City: 'Boston' });
  });

  test('one match: 200 with UpdatedCount, the entity merged with the body in place', async () => {
    const r = await call(service, 'PUT', '/Lab.Person/Id=2', { body: { Age: 13 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['Status', 'Data', 'DataCount', 'UpdatedCount', 'TimeElapsedMs']);
    expect(r.json).toMatchObject({ Data: [{ Id: 2, Name: 'Linus', Age: 13, City: 'Helsinki' }], UpdatedCount: 1 });
    expect(stored()[1]).toEqual({ Id: 2, Name: 'Linus', Age: 13, City: 'Helsinki' });
    expect(stored()).toHaveLength(4);
  });

  test('more than one match: 400 AmbiguousMatch and nothing changes', async () => {
    const r = await call(service, 'PUT', '/Lab.Person/City=London', { body: { Age: 1 } });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('AmbiguousMatch');
    expect(stored()).toEqual(PEOPLE);
  });

  test('PUT takes one entity, not an array of two', async () => {
    const r = await call(service, 'PUT', '/Lab.Person/Id=10', {
      body: [
        { Name: 'A', Age: 1 },
        { Name: 'B', Age: 2 },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(stored()).toEqual(PEOPLE);
  });
});

describe('PATCH updates the matched entities with the body', () => {
  test('one match: 200 with UpdatedCount 1 and the updated entity', async () => {
    const r = await call(service, 'PATCH', '/Lab.Person/Id=2', { body: { City: 'Espoo' } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      Status: 'success',
      Data: [{ Id: 2, Name: 'Linus', Age: 12, City: 'Espoo' }],
      DataCount: 1,
      UpdatedCount: 1,
    });
    expect(stored()[1]).toEqual({ Id: 2, Name: 'Linus', Age: 12, City: 'Espoo' });
  });

  test('no match: 404 NotFound with the error body and its record, nothing changed; GET of the same stays 204', async () => {
    const r = await call(service, 'PATCH', '/Lab.Person/Id=99', { body: { City: 'Espoo' } });
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ Status: 'fail', ErrorCode: 'NotFound', ErrorType: 'Service.Results.NotFound' });
    expect(r.json.Message).toMatch(/PATCH matched no entity of 'Lab.Person'/);
    const record = await call(service, 'GET', r.headers.errorinfo, { headers: { accept: 'application/json;raw=true' } });
    expect(record.json[0]).toMatchObject({ ErrorCode: 'NotFound', Method: 'PATCH' });
    expect(stored()).toEqual(PEOPLE);
    expect((await call(service, 'GET', '/Lab.Person/Id=99')).status).toBe(204);
  });

  test('a patch that breaks the schema is refused and changes nothing', async () => {
    const r = await call(service, 'PATCH', '/Lab.Person/Id=2', { body: { Age: -5 } });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(r.json.Data).toHaveProperty('Age');
    expect(stored()).toEqual(PEOPLE);
  });
});

describe('PATCH and DELETE of more than one entity need unsafe=true', () => {
  test('PATCH of many without unsafe: 400 AmbiguousMatch, nothing changed', async () => {
    const r = await call(service, 'PATCH', '/Lab.Person/City=London', { body: { City: 'Leeds' } });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('AmbiguousMatch');
    expect(r.json.Message).toMatch(/unsafe=true/);
    expect(stored()).toEqual(PEOPLE);
  });

  test('DELETE of many without unsafe: 400 AmbiguousMatch, nothing changed', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person/Age>0');
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('AmbiguousMatch');
    expect(stored()).toEqual(PEOPLE);
  });

  test('PATCH of many with unsafe=true updates them all', async () => {
    const r = await call(service, 'PATCH', '/Lab.Person/City=London/unsafe=true', { body: { City: 'Leeds' } });
    expect(r.status).toBe(200);
    expect(r.json.UpdatedCount).toBe(2);
    expect(
      stored()
        .filter((p: any) => p.City === 'Leeds')
        .map((p: any) => p.Id),
    ).toEqual([1, 4]);
  });

  test('DELETE of many with unsafe=true deletes them all', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person/City=London/unsafe=true');
    expect(r.status).toBe(200);
    expect(r.json.DeletedCount).toBe(2);
    expect(stored().map((p: any) => p.Id)).toEqual([2, 3]);
  });

  test('limit narrows what a PATCH or DELETE targets, so one entity needs no unsafe', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person/City=London/order_desc=Age&limit=1');
    expect(r.status).toBe(200);
    expect(r.json.DeletedCount).toBe(1);
    expect(stored().map((p: any) => p.Id)).toEqual([2, 3, 4]);
  });
});

describe('DELETE answers with the counts and no data', () => {
  test('the envelope is Status, Data [], DataCount 0, DeletedCount, TimeElapsedMs', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person/Id=3');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['Status', 'Data', 'DataCount', 'DeletedCount', 'TimeElapsedMs']);
    expect(r.json).toMatchObject({ Status: 'success', Data: [], DataCount: 0, DeletedCount: 1 });
    expect(stored().map((p: any) => p.Id)).toEqual([1, 2, 4]);
  });

  test('nothing matched: 200 with DeletedCount 0', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person/Id=99');
    expect(r.status).toBe(200);
    expect(r.json.DeletedCount).toBe(0);
  });

  test('DELETE needs no body', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person/Id=4', { headers: RAW });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([]);
  });
});

describe('POST with safepost inserts or updates each entity in one request', () => {
  test('a match is updated, no match is inserted; 200 with both counts', async () => {
    const r = await call(service, 'POST', '/Lab.Person/_/safepost=Id', {
      body: [
        { Id: 1, Name: 'Ada', Age: 37 },
        { Id: 7, Name: 'Hedy', Age: 30 },
      ],
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(['Status', 'Data', 'DataCount', 'InsertedCount', 'UpdatedCount', 'TimeElapsedMs']);
    expect(r.json).toMatchObject({ InsertedCount: 1, UpdatedCount: 1, DataCount: 2 });
    expect(r.json.Data).toEqual(
      expect.arrayContaining([
        { Id: 1, Name: 'Ada', Age: 37, City: 'London' },
        { Id: 7, Name: 'Hedy', Age: 30 },
      ]),
    );
    expect(stored()[0]).toEqual({ Id: 1, Name: 'Ada', Age: 37, City: 'London' });
    expect(stored()[4]).toEqual({ Id: 7, Name: 'Hedy', Age: 30 });
  });

  test('matching on several properties', async () => {
    const r = await call(service, 'POST', '/Lab.Person/_/safepost=Name,City', {
      body: [
        { Name: 'Tim', City: 'London', Age: 10 },
        { Name: 'Tim', City: 'Paris', Age: 70 },
      ],
    });
    expect(r.json).toMatchObject({ InsertedCount: 1, UpdatedCount: 1 });
    expect(stored()[3]).toEqual({ Id: 4, Name: 'Tim', Age: 10, City: 'London' });
    expect(stored()[4]).toEqual({ Name: 'Tim', City: 'Paris', Age: 70 });
  });

  test('matched exactly: text in another case is another value', async () => {
    await call(service, 'POST', '/Lab.Person', { body: { Name: 'tim', Age: 1 } });
    const r = await call(service, 'POST', '/Lab.Person/_/safepost=Name', { body: { Name: 'Tim', Age: 11 } });
    expect(r.json).toMatchObject({ InsertedCount: 0, UpdatedCount: 1 });
    expect(stored().filter((p: any) => p.Name.toLowerCase() === 'tim')).toEqual([
      { Id: 4, Name: 'Tim', Age: 11, City: 'London' },
      { Name: 'tim', Age: 1 },
    ]);
  });

  test('only inserts: still 200 with UpdatedCount 0', async () => {
    const r = await call(service, 'POST', '/Lab.Person/_/safepost=Id', { body: { Id: 8, Name: 'Joan', Age: 60 } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ InsertedCount: 1, UpdatedCount: 0 });
  });

  test('an entity matching two stored ones is ambiguous and nothing is written', async () => {
    const r = await call(service, 'POST', '/Lab.Person/_/safepost=City', {
      body: [
        { Name: 'New', Age: 1, City: 'Paris' },
        { Name: 'X', Age: 2, City: 'London' },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('AmbiguousMatch');
    expect(stored()).toEqual(PEOPLE);
  });

  test('entities are applied in order: a key inserted earlier in the request is updated by a later one', async () => {
    const r = await call(service, 'POST', '/Lab.Person/_/safepost=Id', {
      body: [
        { Id: 9, Name: 'Edith', Age: 50 },
        { Id: 9, Name: 'Edith', Age: 51 },
        { Id: 1, Name: 'Ada', Age: 40 },
        { Id: 1, Name: 'Ada', Age: 41 },
      ],
    });
    expect(r.json).toMatchObject({ InsertedCount: 1, UpdatedCount: 1, DataCount: 2 });
    expect(r.json.Data).toEqual([
      { Id: 9, Name: 'Edith', Age: 51 },
      { Id: 1, Name: 'Ada', Age: 41, City: 'London' },
    ]);
    expect(stored().filter((p: any) => p.Id === 9)).toEqual([{ Id: 9, Name: 'Edith', Age: 51 }]);
    expect(stored()[0]).toEqual({ Id: 1, Name: 'Ada', Age: 41, City: 'London' });
  });

  test('matching looks at every stored entity, whatever conditions the URI holds', async () => {
    const r = await call(service, 'POST', '/Lab.Person/Age>40/safepost=Id', { body: { Id: 1, Name: 'Ada', Age: 37 } });
    expect(r.json).toMatchObject({ InsertedCount: 0, UpdatedCount: 1 });
    expect(stored()).toHaveLength(PEOPLE.length);
  });
});

describe('concurrent writes to the same entity both land', () => {
  test('a PATCH whose target changed after it selected it runs again and keeps the other change', async () => {
    const inner = new MemoryStorage([{ Id: 1, Name: 'Ada', Age: 36 }]);
    let waiting: Array<() => void> = [];
    let gate = true;
    const racing = {
      // The first two selects wait for each other, so both PATCHes see the same stored entity.
      select: async (q: any) => {
        const result = await inner.select(q);
        if (gate) {
          await new Promise<void>((resolve) => {
            waiting.push(resolve);
            if (waiting.length === 2) {
              gate = false;
              waiting.forEach((w) => w());
              waiting = [];
            }
          });
        }
        return result;
      },
      write: (batch: any) => inner.write(batch),
    };
    const s = createService();
    s.addResource({ name: 'Racer', storage: racing });
    const [a, b] = await Promise.all([
      call(s, 'PATCH', '/Racer/Id=1', { body: { Name: 'Ada L.' } }),
      call(s, 'PATCH', '/Racer/Id=1', { body: { Age: 37 } }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(inner.all()).toEqual([{ Id: 1, Name: 'Ada L.', Age: 37 }]);
  });
});

describe('a change names properties case-insensitively, like locators', () => {
  test('PATCH of `name` updates `Name` instead of adding a second property', async () => {
    const r = await call(service, 'PATCH', '/Lab.Person/Id=1', { body: { name: 'Ada L.', AGE: 37 } });
    expect(r.status).toBe(200);
    expect(stored()[0]).toEqual({ Id: 1, Name: 'Ada L.', Age: 37, City: 'London' });
  });
});

describe('upserts do not race: concurrent PUTs and safeposts of one key insert once', () => {
  test('two PUTs of a new key at once: one inserts (201), the other updates (200)', async () => {
    const [a, b] = await Promise.all([
      call(service, 'PUT', '/Lab.Person/Id=9', { body: { Id: 9, Name: 'Hedy', Age: 30 } }),
      call(service, 'PUT', '/Lab.Person/Id=9', { body: { Id: 9, Name: 'Hedy', Age: 31 } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(stored().filter((p: any) => p.Id === 9)).toEqual([{ Id: 9, Name: 'Hedy', Age: 31 }]);
  });

  test('two safeposts of a new key at once store it once', async () => {
    const results = await Promise.all(
      [1, 2, 3].map((n) => call(service, 'POST', '/Lab.Person/_/safepost=Id', { body: { Id: 9, Name: 'Hedy', Age: 30 + n } })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(stored().filter((p: any) => p.Id === 9)).toHaveLength(1);
  });
});

describe('safepost needs the key properties in every entity', () => {
  test('an entity without a key property is refused and nothing is written', async () => {
    const r = await call(service, 'POST', '/Lab.Person/_/safepost=Id', {
      body: [
        { Id: 8, Name: 'Joan', Age: 60 },
        { Name: 'Bob', Age: 2 },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ ErrorCode: 'InvalidResourceEntity', Data: { Id: expect.any(String) } });
    expect(stored()).toEqual(PEOPLE);
  });
});

describe('a query string never widens a write (DESIGN 13)', () => {
  test('DELETE /Lab.Person?Id=1 is 400 and deletes nothing', async () => {
    const r = await call(service, 'DELETE', '/Lab.Person?Id=1');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ ErrorCode: 'InvalidUriSyntax', Message: expect.stringContaining('/Lab.Person/Id=1') });
    expect(stored()).toEqual(PEOPLE);
  });

  test('PATCH with a query string changes nothing', async () => {
    expect((await call(service, 'PATCH', '/Lab.Person?City=London&unsafe=true', { body: { Age: 1 } })).status).toBe(400);
    expect(stored()).toEqual(PEOPLE);
  });
});
