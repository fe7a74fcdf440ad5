import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MemoryStorage } from '@resourcery/core';
import { createFileService } from '@resourcery/cli';

/**
 * Issue 15 item 3: a keyed POST must not cost the size of the file. The core checks that
 * the new key is free with a query of one `=` condition; the file store answers it from an
 * index kept up to date with the writes, with the same results as a scan.
 */

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
let dir: string;
let file: string;
let opened: Awaited<ReturnType<typeof createFileService>> | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'resourcery-index-'));
  file = path.join(dir, 'db.json');
  await writeFile(
    file,
    JSON.stringify({
      items: [
        { id: 1, name: 'one', tag: 'a' },
        { id: 2, name: 'two', tag: 'a' },
        { id: 3, name: 'Three', tag: 7 },
        { id: 4, name: '7', tag: '7' },
      ],
    }),
  );
  opened = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false });
});
afterEach(async () => {
  await opened?.store.close();
  jest.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

async function call(method: string, uri: string, body?: unknown) {
  const r = await opened!.service.handle({ method, uri, headers: RAW, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: r.body === null ? null : JSON.parse(String(r.body)) };
}

const ids = async (uri: string) => {
  const r = await call('GET', uri);
  // 204: nothing matched.
  if (r.status === 204) return [];
  if (r.status !== 200) throw new Error(`GET ${uri}: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body as Array<{ id: number }>).map((e) => e.id);
};

test('one-condition lookups answer as a scan would: types, case of the property name, several matches, none', async () => {
  expect(await ids('/items/id=2')).toEqual([2]);
  expect(await ids('/items/ID=2')).toEqual([2]);
  expect(await ids("/items/id='2'")).toEqual([]);
  expect(await ids('/items/name=Three')).toEqual([3]);
  expect(await ids('/items/name=three')).toEqual([]);
  // A number literal matches the number (the string spelled so is a mixed pair), a bare key both.
  expect(await ids('/items/tag=7')).toEqual([3]);
  expect(await ids("/items/tag='7'")).toEqual([4]);
  expect(await ids('/items/tag=a/order_desc=id')).toEqual([2, 1]);
  expect(await ids('/items/id=9')).toEqual([]);
  expect(await ids('/items/id=2/select=id')).toEqual([2]);
});

test('lookups follow writes: POST, a PATCH that changes the key, DELETE; a taken key is 409, a freed one is free', async () => {
  expect(await ids('/items/id=1')).toEqual([1]);
  expect((await call('POST', '/items', { id: 5, name: 'five' })).status).toBe(201);
  expect(await ids('/items/id=5')).toEqual([5]);
  expect((await call('POST', '/items', { id: 5, name: 'again' })).status).toBe(409);
  expect((await call('PATCH', '/items/id=1', { id: 10 })).status).toBe(200);
  expect(await ids('/items/id=1')).toEqual([]);
  expect(await ids('/items/id=10')).toEqual([10]);
  expect((await call('POST', '/items', { id: 1, name: 'one again' })).status).toBe(201);
  expect((await call('DELETE', '/items/id=2')).status).toBe(200);
  expect(await ids('/items/id=2')).toEqual([]);
  expect((await call('POST', '/items', { id: 2, name: 'two again' })).status).toBe(201);
  expect(await ids('/items')).toEqual([10, 3, 4, 5, 1, 2]);
  expect((await call('GET', '/items/id=2')).body).toEqual([{ id: 2, name: 'two again' }]);
});

test('a POST with its key does not scan the resource to check the key is free', async () => {
  expect(await ids('/items/id=4')).toEqual([4]);
  const selects = jest.spyOn(MemoryStorage.prototype, 'select');
  expect((await call('POST', '/items', { id: 6, name: 'six' })).status).toBe(201);
  expect(selects.mock.calls.filter(([query]) => query.predicate !== null)).toEqual([]);
});

test('a POST without its key takes the next number without scanning; updates and deletes of the largest are followed', async () => {
  const selects = jest.spyOn(MemoryStorage.prototype, 'select');
  const post = async (body: object) => {
    const r = await call('POST', '/items', body);
    expect(r.status).toBe(201);
    return (r.body as Array<{ id: number }>)[0].id;
  };
  expect(await post({ name: 'five' })).toBe(5);
  expect(await post({ name: 'six' })).toBe(6);
  // Each generated key came from the index (and its check from the equality index): no
  // ordered or filtered select reached the stored entities (the webhooks' load may).
  expect(selects.mock.calls.filter(([q]) => q.order !== null || q.predicate !== null)).toEqual([]);
  expect((await call('PATCH', '/items/id=6', { id: 100 })).status).toBe(200);
  expect(await post({ name: 'after 100' })).toBe(101);
  expect((await call('DELETE', '/items/id=101')).status).toBe(200);
  expect((await call('DELETE', '/items/id=100')).status).toBe(200);
  expect(await post({ name: 'after deletes' })).toBe(6);
  // A text key on top: every key is looked at, as a scan would (schemaless: a UUID).
  expect((await call('POST', '/items', { id: 'zz', name: 'text' })).status).toBe(201);
  const generated = (await call('POST', '/items', { name: 'uuid' })).body as Array<{ id: unknown }>;
  expect(generated[0].id).toMatch(/^[0-9a-f-]{36}$/);
});
