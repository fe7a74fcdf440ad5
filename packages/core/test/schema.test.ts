import { createService, MemoryStorage, type JsonSchema } from '@resourcery/core';
import { parseUri, type AnyOf, type Condition } from '@resourcery/core/storage';

const schema: JsonSchema = {
  type: 'object',
  properties: {
    Id: { type: 'integer' },
    Name: { type: 'string' },
    Zip: { type: 'string' },
    Age: { type: 'integer' },
    Score: { type: 'number' },
    Member: { type: 'boolean' },
    Nick: { type: ['string', 'null'] },
    Tags: { type: 'array', items: { type: 'string' } },
    Address: { type: 'object', properties: { City: { type: 'string' } } },
    Extra: { type: 'object' },
  },
};

const rows = () => [
  {
    Id: 1,
    Name: 'Ann',
    Zip: '02139',
    Age: 30,
    Score: 2.5,
    Member: true,
    Nick: null,
    Tags: ['a'],
    Address: { City: 'Oslo' },
    Extra: { Any: 1 },
  },
  { Id: 2, Name: '123', Zip: '10001', Age: 7, Score: 10, Member: false, Nick: 'B', Tags: [], Address: { City: 'Rome' } },
];

function setUp() {
  const service = createService();
  const person = service.addResource({ name: 'Person', schema, storage: new MemoryStorage(rows()) });
  service.addResource({ name: 'Loose', storage: new MemoryStorage([{ Id: 1, Nick: null }, { Id: 2 }, { Id: 3, Nick: 'C' }]) });
  service.addResource({
    name: 'Open',
    schema: { type: 'object', properties: { Id: { type: 'integer' } }, additionalProperties: true },
    storage: new MemoryStorage([{ Id: 1, More: 'x' }]),
  });
  return { service, person };
}

async function get(uri: string): Promise<{ status: number; body: any }> {
  const { service } = setUp();
  const res = await service.handle({ method: 'GET', uri, headers: { accept: 'application/json;raw=true' } });
  return { status: res.status, body: typeof res.body === 'string' && res.body !== '' ? JSON.parse(res.body) : null };
}

async function ids(uri: string): Promise<unknown[]> {
  const res = await get(uri);
  if (res.status === 204) return [];
  expect(res.status).toBe(200);
  return res.body.map((e: { Id: unknown }) => e.Id);
}

describe('condition values are converted to the declared type', () => {
  test('a string property reads Zip=02139 as the string "02139"', async () => {
    const { person } = setUp();
    expect((person.query(parseUri('/Person/Zip=02139')).conditions[0] as Condition).value).toEqual({ kind: 'string', value: '02139' });
    expect(await ids('/Person/Zip=02139')).toEqual([1]);
  });

  test('a string property reads digits as text', async () => {
    expect(await ids('/Person/Name=123')).toEqual([2]);
    expect(await ids('/Person/Name<2')).toEqual([2]);
  });

  test('integer, number and boolean properties read their literals', async () => {
    expect(await ids('/Person/Age=30')).toEqual([1]);
    expect(await ids('/Person/age>=3e0')).toEqual([1, 2]);
    expect(await ids('/Person/Score>2.4&Score<3')).toEqual([1]);
    expect(await ids('/Person/Member=false')).toEqual([2]);
  });

  test('null is accepted for every type', async () => {
    expect(await ids('/Person/Nick=null')).toEqual([1]);
    expect(await ids('/Person/Age!=null')).toEqual([1, 2]);
  });

  test('a nested property and .Length are typed too', async () => {
    expect(await ids('/Person/Address.City=Rome')).toEqual([2]);
    expect(await ids('/Person/Name.Length=3')).toEqual([1, 2]);
    expect(await ids('/Person/Tags.Length>0')).toEqual([1]);
  });

  test('a property of an object without declared properties is not checked', async () => {
    expect(await ids('/Person/Extra.Any=1')).toEqual([1]);
  });
});

describe('alternatives (`|`) are typed each by its own locator, an IN list by the one it repeats', () => {
  test('an IN list of numbers, of strings, and alternatives on several properties', async () => {
    const { person } = setUp();
    const values = (uri: string) => (person.query(parseUri(uri)).conditions[0] as AnyOf).anyOf.map((c) => [c.locator.text, c.value]);
    expect(values('/Person/Id=1|2')).toEqual([
      ['Id', { kind: 'raw', text: '1', number: 1 }],
      ['Id', { kind: 'raw', text: '2', number: 2 }],
    ]);
    expect(values("/Person/Zip=02139|'10001'|null")).toEqual([
      ['Zip', { kind: 'string', value: '02139' }],
      ['Zip', { kind: 'string', value: '10001' }],
      ['Zip', { kind: 'null' }],
    ]);
    expect(values('/Person/Age=30|Name=123|7|Age=7')).toEqual([
      ['Age', { kind: 'raw', text: '30', number: 30 }],
      ['Name', { kind: 'string', value: '123' }],
      ['Name', { kind: 'string', value: '7' }],
      ['Age', { kind: 'raw', text: '7', number: 7 }],
    ]);
    expect(await ids('/Person/Zip=02139|10001')).toEqual([1, 2]);
    expect(await ids('/Person/Age=30|Name=123|Age=99')).toEqual([1, 2]);
  });

  test.each([
    ['Id=1|2|abc', 400, 'InvalidConditionValueType', "'abc' in condition 'Id=abc'"],
    ['Id=1|Age=3.5', 400, 'InvalidConditionValueType', "'3.5' in condition 'Age=3.5'"],
    ['Name=x|Age=1|2|x', 400, 'InvalidConditionValueType', "'x' in condition 'Age=x'"],
    ['Id=1|2|Nope=3', 404, 'UnknownProperty', "Unknown property 'Nope' in condition 'Nope=3'"],
  ])('%s is a %s naming the alternative', async (condition, status, code, message) => {
    const res = await get(`/Person/${condition}`);
    expect([res.status, res.body.ErrorCode]).toEqual([status, code]);
    expect(res.body.Message).toContain(message);
  });
});

describe('a value that is not of the declared type is a 400 InvalidConditionValueType', () => {
  test.each([
    ['Age=abc', 'abc'],
    ['Age=3.5', '3.5'],
    ["Age='30'", '30'],
    ['Score=high', 'high'],
    ['Member=yes', 'yes'],
    ['Name.Length=abc', 'abc'],
    ['Tags.Length=x', 'x'],
    ['AGE=true', 'true'],
  ])('%s', async (condition, value) => {
    const res = await get(`/Person/${condition}`);
    expect(res.status).toBe(400);
    expect(res.body.ErrorCode).toBe('InvalidConditionValueType');
    expect(res.body.Message).toContain(value);
  });
});

describe('an unknown property on a resource with a schema is a 404 UnknownProperty', () => {
  test.each(['Nope=1', 'Nope=null', 'Address.Nope=x', 'Id=1&Nope!=null'])('%s', async (condition) => {
    const res = await get(`/Person/${condition}`);
    expect(res.status).toBe(404);
    expect(res.body.ErrorCode).toBe('UnknownProperty');
    expect(res.body.Message).toContain('Nope');
  });

  test('a schema that allows additional properties accepts unknown ones', async () => {
    expect(await ids('/Open/More=x')).toEqual([1]);
  });
});

describe('schemaless resources treat a missing property as null', () => {
  test('=null matches null and missing; !=null the rest', async () => {
    expect(await ids('/Loose/Nick=null')).toEqual([1, 2]);
    expect(await ids('/Loose/Nope=null')).toEqual([1, 2, 3]);
    expect(await ids('/Loose/Nick!=null')).toEqual([3]);
  });

  test('a condition on a missing property matches nothing, never an error', async () => {
    expect(await get('/Loose/Nope=1')).toEqual({ status: 204, body: null });
  });
});

describe('meta-condition locators must name declared properties too', () => {
  test.each(['select=Nope', 'order_asc=Nope', 'add=Nope.Length', 'rename=Nope->X', 'safepost=Nope'])(
    '%s is 404 UnknownProperty',
    async (meta) => {
      const s = createService();
      s.addResource({ name: 'Typed', schema: { type: 'object', properties: { Id: { type: 'integer' }, Name: { type: 'string' } } } });
      const r = await s.handle({
        method: meta.startsWith('safepost') ? 'POST' : 'GET',
        uri: `/Typed/_/${meta}`,
        headers: { 'content-type': 'application/json' },
        body: meta.startsWith('safepost') ? '{"Id":1}' : undefined,
      });
      expect(r.status).toBe(404);
      expect(JSON.parse(String(r.body)).ErrorCode).toBe('UnknownProperty');
    },
  );

  test('names made by add and rename may be selected and ordered', async () => {
    const s = createService();
    s.addResource({ name: 'Typed', schema: { type: 'object', properties: { Id: { type: 'integer' }, Name: { type: 'string' } } } });
    await s.handle({
      method: 'POST',
      uri: '/Typed',
      headers: { 'content-type': 'application/json' },
      body: '[{"Id":1,"Name":"Bo"},{"Id":2,"Name":"Al"}]',
    });
    const r = await s.handle({
      method: 'GET',
      uri: '/Typed/_/add=Name.Length&rename=Name->Who&select=Who,Name.Length&order_asc=Who',
      headers: { accept: 'application/json;raw=true' },
    });
    expect(JSON.parse(String(r.body))).toEqual([
      { Who: 'Al', 'Name.Length': 2 },
      { Who: 'Bo', 'Name.Length': 2 },
    ]);
  });
});
