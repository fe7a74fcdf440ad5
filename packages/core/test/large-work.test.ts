import { MemoryStorage, Service, type Entity, type PlainResponse } from '@resourcery/core';
import { evaluate } from '@resourcery/core/storage';
import { DEFAULT_DERIVED_LIMITS, evaluateLarge, isLarge, sortInSlices } from '../src/query/large';
import { sortEntities } from '../src/query/order';
import { bodyText, call, RAW, ticker, turnsDuring } from './handle-support';
import { compile } from './query-support';

/** Large work gives other requests turns of the event loop (docs/limits.md#large-work). */

/** `count` entities of about 1.2 KB each. */
function people(count: number): Entity[] {
  return Array.from({ length: count }, (_, i) => ({
    Id: i + 1,
    Name: `person ${i % 97}`,
    City: ['Oslo', 'Lima', 'Pune'][i % 3],
    Bio: `${i % 50} ${'lorem ipsum dolor sit amet '.repeat(40)}`,
  }));
}

function service(count = 10_000, options: ConstructorParameters<typeof Service>[0] = {}): Service {
  const s = new Service({ events: false, ...options });
  s.addResource({ name: 'Person', storage: new MemoryStorage(people(count)) });
  s.addResource({ name: 'Small', storage: new MemoryStorage([{ Id: 1 }]) });
  return s;
}

/**
 * The body's chunks, and how many turns of the event loop (setImmediate callbacks of a
 * ticker) had run when each arrived.
 */
async function chunksWithTurns(body: PlainResponse['body']): Promise<{ text: string; turns: number[] }> {
  const t = ticker();
  const turns: number[] = [];
  let text = '';
  try {
    if (body === null || typeof body === 'string' || body instanceof Uint8Array) return { text: await bodyText(body), turns: [t.turns] };
    for await (const chunk of body) {
      turns.push(t.turns);
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    }
    return { text, turns };
  } finally {
    t.stop();
  }
}

/** Whether the event loop turned between every two chunks. */
function turnedBetween(turns: number[]): boolean {
  return turns.length > 1 && turns.every((t, i) => i === 0 || t > turns[i - 1]);
}

describe('a large answer is written in chunks, the event loop turning between them', () => {
  test('JSON envelope and raw=true: several chunks, the same text as one piece', async () => {
    const s = service();
    for (const headers of [{}, RAW]) {
      const response = await s.handle({ method: 'GET', uri: '/Person/_/limit=99999999', headers, body: null });
      expect(typeof response.body).not.toBe('string');
      const { text, turns } = await chunksWithTurns(response.body);
      expect(turns.length).toBeGreaterThan(20);
      expect(turnedBetween(turns)).toBe(true);
      const json = JSON.parse(text);
      const data = headers === RAW ? json : json.Data;
      expect(data).toHaveLength(10_000);
      expect(JSON.stringify(data)).toBe(JSON.stringify(people(10_000)));
      if (headers !== RAW) expect([json.Status, json.DataCount, typeof json.TimeElapsedMs]).toEqual(['success', 10_000, 'number']);
    }
  });

  test('count=true keeps its TotalCount in a chunked envelope', async () => {
    const reply = await call(service(), 'GET', '/Person/_/limit=5000&count=true');
    expect(typeof reply.body).not.toBe('string');
    expect([reply.json.DataCount, reply.json.TotalCount, reply.json.Data.length]).toEqual([5000, 10_000, 5000]);
  });

  test('a small answer is still one string, made in the request turn', () => {
    const response = service().answer({ method: 'GET', uri: '/Person/_/limit=20', headers: RAW, body: null }) as PlainResponse;
    expect(typeof response.body).toBe('string');
    expect(JSON.parse(response.body as string)).toHaveLength(20);
  });

  test('the outcome of a large POST is chunked too, in JSON and in JSON Lines', async () => {
    const s = service(0);
    const body = JSON.stringify(people(3000));
    const json = await s.handle({ method: 'POST', uri: '/Person', headers: { 'content-type': 'application/json' }, body });
    const { text, turns } = await chunksWithTurns(json.body);
    expect(turnedBetween(turns)).toBe(true);
    expect(JSON.parse(text)).toMatchObject({ Status: 'success', DataCount: 3000, InsertedCount: 3000 });
    const lines = await s.handle({
      method: 'POST',
      uri: '/Small',
      headers: { 'content-type': 'application/json', accept: 'application/jsonlines' },
      body: JSON.stringify(people(3000).map((e) => ({ ...e, Id: (e.Id as number) + 1 }))),
    });
    const out = await bodyText(lines.body);
    expect(out.endsWith('}\n')).toBe(true);
    expect(out.split('\n')).toHaveLength(2);
    expect(JSON.parse(out).InsertedCount).toBe(3000);
  });

  test('a cheap request sent while a large answer is written completes before it', async () => {
    const s = service();
    const done: string[] = [];
    const large = call(s, 'GET', '/Person/_/limit=99999999', { headers: RAW }).then((r) => done.push(`large ${r.status}`));
    await new Promise((resolve) => setImmediate(resolve));
    const cheap = call(s, 'GET', '/Small/Id=1', { headers: RAW }).then((r) => done.push(`cheap ${r.status}`));
    await Promise.all([large, cheap]);
    expect(done).toEqual(['cheap 200', 'large 200']);
  });
});

describe('a large set is projected, made distinct and sorted in slices', () => {
  const data: Entity[] = Array.from({ length: 5000 }, (_, i) => ({
    Id: i,
    Name: `n${(i * 7919) % 613}`,
    Age: (i * 31) % 90,
    Tags: i % 5 === 0 ? null : ['a', 'b', 'c'].slice(0, i % 4),
    City: [null, 'Oslo', 'Lima', 7, true][i % 5],
  }));
  const QUERIES: Array<[string, string]> = [
    ['_', 'add=Name.Length,Tags.Length&select=Id,Name'],
    ['Age>10', 'select=City,Age&distinct=true&order_asc=City'],
    ['_', 'select=Name&distinct=true&order_desc=Name&offset=3&limit=40'],
    ['_', 'add=Name.Length&order_desc=Name.Length,Id&offset=-100'],
    ['_', 'order_asc=Age&order_desc=Name&offset=1200'],
    ['_', 'rename=Name->Who&order_asc=Who&limit=2500'],
    ['Age<80', 'select=Age&distinct=true'],
    ['_', 'add=Age&offset=4990'],
  ];

  test.each(QUERIES)('%s/%s: the same answer as evaluated in one go', async (conditions, meta) => {
    const q = compile(conditions, meta);
    expect(isLarge(data.length, q, {})).toBe(true);
    expect(await evaluateLarge(data, q, {}, DEFAULT_DERIVED_LIMITS)).toEqual(evaluate(data, q));
  });

  test('sortInSlices is sortEntities: stable, by key then position, each key in its direction', async () => {
    for (const n of [0, 1, 1023, 1025, 5000]) {
      const items = Array.from({ length: n }, (_, i) => ({ i, a: (i * 37) % 11, b: [null, 'x', 2, 'y'][i % 4] }));
      const one = (e: (typeof items)[number]) => e.a;
      const two = (e: (typeof items)[number]) => [e.b, e.a];
      expect(await sortInSlices(items, one, true)).toEqual(sortEntities(items, one, true));
      expect(await sortInSlices(items, two, [false, true])).toEqual(sortEntities(items, two, [false, true]));
    }
  });

  test('the answer of add locators over 10,000 entities comes after turns of the event loop, and is right', async () => {
    const s = service();
    let response: Awaited<ReturnType<Service['handle']>> | undefined;
    const turns = await turnsDuring(async () => {
      response = await s.handle({
        method: 'GET',
        uri: '/Person/_/add=Name.Length,City.Length,Bio.Length,Id.Length&select=Id',
        headers: RAW,
        body: null,
      });
    });
    expect(turns).toBeGreaterThan(1);
    const out = JSON.parse(await bodyText(response!.body));
    expect(out).toHaveLength(10_000);
    const bio = (people(10_000)[9999].Bio as string).length;
    expect(out[9999]).toEqual({ Id: 10_000, 'Name.Length': 8, 'City.Length': 4, 'Bio.Length': bio, 'Id.Length': null });
  });

  test('a cheap request sent while a large distinct and order run completes before it', async () => {
    const s = service();
    const done: string[] = [];
    const large = call(s, 'GET', '/Person/_/select=Bio,City&distinct=true&order_asc=Bio', { headers: RAW }).then((r) =>
      done.push(`large ${r.status} ${r.json.length}`),
    );
    await new Promise((resolve) => setImmediate(resolve));
    const cheap = call(s, 'GET', '/Small/Id=1', { headers: RAW }).then((r) => done.push(`cheap ${r.status}`));
    await Promise.all([large, cheap]);
    expect(done).toEqual(['cheap 200', 'large 200 150']);
  });
});

describe('limits on derived work: 400 naming the limit', () => {
  test('more add and select locators than maxLocators', async () => {
    const s = service(10, { maxLocators: 3 });
    expect((await call(s, 'GET', '/Person/_/add=Name.Length,Bio.Length&select=Id,Name', { headers: RAW })).status).toBe(400);
    const reply = await call(s, 'GET', '/Person/_/add=Name.Length,Bio.Length&select=Id,Name', { headers: RAW });
    expect([reply.status, reply.json.ErrorCode]).toEqual([400, 'InvalidMetaConditionValueType']);
    expect(reply.json.Message).toContain('maxLocators');
    expect(reply.json.Message).toContain('4 locators');
    expect((await call(s, 'GET', '/Person/_/add=Name.Length&select=Id,Name', { headers: RAW })).status).toBe(200);
  });

  test('the default bound refuses a hundred and one locators', async () => {
    const add = Array.from({ length: 101 }, (_, i) => `P${i}`).join(',');
    const reply = await call(service(10), 'GET', `/Person/_/add=${add}`, { headers: RAW });
    expect([reply.status, reply.json.ErrorCode]).toEqual([400, 'InvalidMetaConditionValueType']);
  });

  test('more derived values than maxDerivedValues, on small and large sets', async () => {
    for (const count of [100, 5000]) {
      const s = service(count, { maxDerivedValues: 150 });
      const reply = await call(s, 'GET', '/Person/_/add=Name.Length&select=Id', { headers: RAW });
      expect([reply.status, reply.json.ErrorCode]).toEqual([400, 'InvalidMetaConditionValueType']);
      expect(reply.json.Message).toContain('maxDerivedValues');
      expect((await call(s, 'GET', '/Person/_/add=Name.Length&select=Id&limit=75', { headers: RAW })).status).toBe(200);
    }
  });

  test('the options are checked', () => {
    expect(() => new Service({ maxLocators: 0 })).toThrow('maxLocators');
    expect(() => new Service({ maxDerivedValues: 1.5 })).toThrow('maxDerivedValues');
  });
});
