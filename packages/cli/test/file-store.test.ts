import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileService } from '@resourcery/cli';

/** DESIGN 4 and 9: a write is visible only once it is durable; a failed save changes nothing. */

const RAW = { accept: 'application/json;raw=true' };
let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'resourcery-store-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: [{ id: 1, title: 'first' }] }));
});
const opened: Array<Awaited<ReturnType<typeof createFileService>>> = [];
afterEach(async () => {
  for (const { store } of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function openService(config?: Parameters<typeof createFileService>[1]) {
  const service = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false }, config);
  opened.push(service);
  return service;
}

async function json(service: Awaited<ReturnType<typeof createFileService>>['service'], method: string, uri: string, body?: unknown) {
  const r = await service.handle({
    method,
    uri,
    headers: { ...RAW, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: r.body === null ? null : JSON.parse(String(r.body)) };
}

/** Makes the next append fail: a directory where the store creates its journal. */
async function blockSaves(): Promise<() => Promise<void>> {
  const journal = `${file}.journal`;
  await mkdir(journal);
  return () => rm(journal, { recursive: true });
}

describe('the data directory deleted while the server runs', () => {
  test('a write is not acknowledged into a journal no start will read: 500 saying why, and not served', async () => {
    // No compaction by itself: the journal stays open, as under a stream of writes.
    const manual = { bytes: 1 << 30, idleMs: 1 << 30, maxAgeMs: 1 << 30 };
    const o = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false, compaction: manual });
    opened.push(o);
    expect((await json(o.service, 'POST', '/posts', { id: 2, title: 'kept' })).status).toBe(201);
    const log = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    // Retried: a file the store is still writing into the directory fails one pass with ENOTEMPTY (a CI run saw it).
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 });
    const lost = await json(o.service, 'POST', '/posts', { id: 3, title: 'unlinked' });
    expect(lost.status).toBe(500);
    expect(lost.body.Message).toMatch(/journal was removed while the server ran \(was its directory deleted\?\); nothing was changed/);
    expect(JSON.stringify(lost.body)).not.toContain(dir);
    expect(String(log.mock.calls[0]?.[0])).toMatch(/was removed while the server ran/);
    expect((await json(o.service, 'GET', '/posts')).body.map((p: { id: number }) => p.id)).toEqual([1, 2]);
    // Later writes fail too while the directory is gone (no journal can be created).
    expect((await json(o.service, 'POST', '/posts', { id: 4, title: 'later' })).status).toBe(500);
    await o.store.close();
    opened.splice(opened.indexOf(o), 1);
    log.mockRestore();
  });
});

describe('a failed save changes nothing', () => {
  test('the write answers 500 with a generic message, and readers never see it', async () => {
    const { service, store } = await openService();
    const unblock = await blockSaves();
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const failed = await json(service, 'POST', '/posts', { id: 2, title: 'lost' });
    expect(failed.status).toBe(500);
    expect(failed.body.Message).toBe('The change could not be saved to the data file; nothing was changed');
    expect(JSON.stringify(failed.body)).not.toContain(dir);
    // The server side log has the details.
    expect(String(errors.mock.calls[0]?.[0])).toContain(file);
    errors.mockRestore();
    expect((await json(service, 'GET', '/posts')).body).toEqual([{ id: 1, title: 'first' }]);

    // The next good save does not persist the failed write either.
    await unblock();
    expect((await json(service, 'POST', '/posts', { id: 3, title: 'kept' })).status).toBe(201);
    await store.compact();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      posts: [
        { id: 1, title: 'first' },
        { id: 3, title: 'kept' },
      ],
    });
    expect((await json(service, 'GET', '/posts')).body).toEqual([
      { id: 1, title: 'first' },
      { id: 3, title: 'kept' },
    ]);
  });

  test('updates and deletes that fail to save leave the entity as it was', async () => {
    const { service } = await openService();
    const unblock = await blockSaves();
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    expect((await json(service, 'PATCH', '/posts/id=1', { title: 'changed' })).status).toBe(500);
    expect((await json(service, 'DELETE', '/posts/id=1')).status).toBe(500);
    errors.mockRestore();
    await unblock();
    expect((await json(service, 'GET', '/posts')).body).toEqual([{ id: 1, title: 'first' }]);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ posts: [{ id: 1, title: 'first' }] });
  });
});

describe('writes that succeed', () => {
  test('concurrent writes share saves and all land, in the file and in memory', async () => {
    const { service, store } = await openService();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => json(service, 'POST', '/posts', { id: i + 10, title: `p${i}` })),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    await store.compact();
    const saved = JSON.parse(await readFile(file, 'utf8')).posts;
    expect(saved).toHaveLength(21);
    expect((await json(service, 'GET', '/posts')).body).toEqual(saved);
  });

  test('concurrent PATCHes of one entity both land (a conflict waits for the other save, then retries)', async () => {
    const { service, store } = await openService();
    const [a, b] = await Promise.all([json(service, 'PATCH', '/posts/id=1', { a: 1 }), json(service, 'PATCH', '/posts/id=1', { b: 2 })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await store.compact();
    expect(JSON.parse(await readFile(file, 'utf8')).posts).toEqual([{ id: 1, title: 'first', a: 1, b: 2 }]);
  });
});

describe('start-up', () => {
  test('temp files a crash left beside the data file are removed; other files are not', async () => {
    await writeFile(`${file}.4242.tmp`, '{"half":');
    await writeFile(`${file}.journal.4242.tmp`, '{"seq":');
    await writeFile(path.join(dir, 'db.json.bak'), 'keep');
    await writeFile(path.join(dir, 'other.json.4242.tmp'), 'keep');
    await openService();
    expect((await readdir(dir)).sort()).toEqual(['db.json', 'db.json.bak', 'other.json.4242.tmp']);
  });
});

describe('the key json-server users expect (DESIGN 13)', () => {
  test('id present in every entity is the key: /posts/1 answers it, POST generates the next id, saved to the file', async () => {
    const { service, store } = await openService();
    expect((await json(service, 'GET', '/posts/1')).body).toEqual([{ id: 1, title: 'first' }]);
    expect((await json(service, 'POST', '/posts', { title: 'second' })).body).toEqual([{ title: 'second', id: 2 }]);
    expect((await json(service, 'POST', '/posts', { id: 2, title: 'again' })).status).toBe(409);
    await store.compact();
    expect(JSON.parse(await readFile(file, 'utf8')).posts).toEqual([
      { id: 1, title: 'first' },
      { title: 'second', id: 2 },
    ]);
  });

  test('no key when an entity lacks id or two share one; the config file can name another', async () => {
    await writeFile(file, JSON.stringify({ a: [{ id: 1 }, { name: 'no id' }], b: [{ id: 1 }, { id: 1 }], c: [{ sku: 'X-1' }] }));
    const { service } = await openService({ resources: { c: { key: 'sku' } } });
    expect((await json(service, 'GET', '/a/1')).status).toBe(400);
    expect((await json(service, 'GET', '/b/1')).status).toBe(400);
    expect((await json(service, 'GET', '/c/X-1')).body).toEqual([{ sku: 'X-1' }]);
  });
});
