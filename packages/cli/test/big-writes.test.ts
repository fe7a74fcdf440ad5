import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileService } from '@resourcery/cli';
import { MemoryStorage } from '@resourcery/core';

/**
 * A body of ~130,000 entities killed the CLI: applying the journaled group in memory threw
 * (`push(...inserts)` overflows the stack) after the append, the rejection was unhandled,
 * and the unacknowledged write came back at the next start. Now such a body is written (up
 * to `limits.maxEntities`), and a change journaled but not applied is answered 500 saying so
 * before the store stops (docs/cli-durability.md).
 */

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
const MANUAL = { bytes: 1 << 30, idleMs: 1 << 30, maxAgeMs: 1 << 30 };
let dir: string;
let file: string;
const opened: Array<Awaited<ReturnType<typeof createFileService>>> = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'resourcery-big-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: [{ id: 1, title: 'first' }] }));
});
afterEach(async () => {
  jest.restoreAllMocks();
  for (const { store } of opened.splice(0)) await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function open(limits?: { maxEntities?: number }) {
  const o = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false, compaction: MANUAL }, { limits });
  opened.push(o);
  return o;
}

async function call(o: Awaited<ReturnType<typeof open>>, method: string, uri: string, body?: unknown) {
  const r = await o.service.handle({ method, uri, headers: RAW, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: r.body === null ? null : JSON.parse(await text(r.body)) };
}

/** A body as text; a large answer comes in chunks (docs/limits.md#large-work). */
async function text(body: string | Uint8Array | AsyncIterable<string | Uint8Array>): Promise<string> {
  if (typeof body === 'string' || body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  let out = '';
  for await (const chunk of body) out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return out;
}

test('130,000 posts in one POST are journaled, served, and served again after a restart', async () => {
  const o = await open({ maxEntities: 200_000 });
  const posts = Array.from({ length: 130_000 }, (_, i) => ({ id: i + 2, title: `p${i + 2}` }));
  expect((await call(o, 'POST', '/posts', posts)).status).toBe(201);
  expect((await call(o, 'REPORT', '/posts')).body).toBe(130_001);
  await o.store.close();
  opened.splice(0);
  const again = await open();
  expect((await call(again, 'REPORT', '/posts')).body).toBe(130_001);
  // The default limit (100,000) holds in the CLI too.
  expect((await call(again, 'POST', '/posts', posts)).status).toBe(413);
});

test('a change journaled but not applied in memory is answered 500 saying so, stops the store, and is replayed at the next start', async () => {
  const o = await open();
  const halted = jest.fn();
  o.store.halting(halted);
  const log = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  // A defect in applying the change after its append (the stack overflow was one).
  const apply = MemoryStorage.prototype.write;
  const broken = jest.spyOn(MemoryStorage.prototype, 'write').mockImplementation(function (this: MemoryStorage, batch) {
    if (batch.insert?.some((e) => e.title === 'boom')) return Promise.reject(new RangeError('Maximum call stack size exceeded'));
    return apply.call(this, batch);
  });
  const failed = await call(o, 'POST', '/posts', { id: 2, title: 'boom' });
  expect(failed.status).toBe(500);
  expect(failed.body.Message).toMatch(
    /saved in the journal but could not be applied; the server stops, and its next start applies the journal/,
  );
  expect(halted).toHaveBeenCalledTimes(1);
  // Nothing more is written, and no compaction writes memory (which lacks the change) into the file.
  expect((await call(o, 'POST', '/posts', { id: 3, title: 'later' })).status).toBe(500);
  await expect(o.store.compact()).rejects.toThrow(/could not be applied/);
  expect(String(log.mock.calls[0]?.[0])).toMatch(/could not be applied in memory; the server stops/);
  broken.mockRestore();
  await o.store.close();
  opened.splice(0);
  const again = await open();
  expect((await call(again, 'GET', '/posts/2')).body).toEqual([{ id: 2, title: 'boom' }]);
  expect((await call(again, 'GET', '/posts/3')).status).toBe(204);
});
