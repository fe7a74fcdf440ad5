import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFileService, type CompactionPolicy } from '@resourcery/cli';
import { killAll, request, requireBuiltCli, start, stop } from './cli-support';

/**
 * Issue 30: keyed POSTs (a key given or generated) no longer wait for each other's fsync.
 * The file store checks keys and reserves generated numbers itself (keys.ts), so the core
 * runs them side by side and those that arrive together share one journal append: one
 * line and one fsync per group, each write acknowledged once its group is durable.
 */

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
const MANUAL: CompactionPolicy = { bytes: 1 << 30, idleMs: 1 << 30, maxAgeMs: 1 << 30 };

let dir: string;
let file: string;

beforeAll(requireBuiltCli);
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-group-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ items: [{ id: 1, name: 'first' }] }));
});
afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** The journal's lines (a checkpoint, then one line per group of writes: one fsync each). */
const journal = async () =>
  (await readFile(`${file}.journal`, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seq: number; w?: unknown[] });

test('concurrent keyed POSTs, given and generated keys, share appends; keys stay unique and a taken key is 409', async () => {
  const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false, compaction: MANUAL });
  try {
    const post = (body: unknown) => service.handle({ method: 'POST', uri: '/items', headers: RAW, body: JSON.stringify(body) });
    const answers = await Promise.all([
      ...Array.from({ length: 16 }, (_, i) => post({ id: 100 + i, name: `given ${i}` })),
      ...Array.from({ length: 16 }, (_, i) => post({ name: `generated ${i}` })),
    ]);
    expect(answers.map((a) => a.status)).toEqual(Array(32).fill(201));
    const ids = answers.map((a) => (JSON.parse(String(a.body)) as Array<{ id: number }>)[0].id);
    expect(new Set(ids).size).toBe(32);
    // Generated numbers pass the largest key stored when they were handed out, and never repeat one given.
    for (const id of ids.slice(16)) expect(Number.isInteger(id) && id > 1).toBe(true);

    const groups = (await journal()).filter((l) => l.w !== undefined);
    expect(groups.length).toBeLessThan(32);
    expect(groups.length).toBeGreaterThan(0);

    // Two POSTs of one new key at once: one is stored, the other is refused, as one after the other would be.
    const [a, b] = await Promise.all([post({ id: 500, name: 'a' }), post({ id: 500, name: 'b' })]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect((await post({ id: 100, name: 'again' })).status).toBe(409);
    const served = JSON.parse(String((await service.handle({ method: 'GET', uri: '/items', headers: RAW })).body)) as Array<{ id: number }>;
    expect(served).toHaveLength(34);
    expect(new Set(served.map((e) => e.id)).size).toBe(34);
  } finally {
    await store.close();
  }
});

test('writers that each POST one entity after another, keys generated, span many groups: every POST is 201, no number twice', async () => {
  const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false, compaction: MANUAL });
  try {
    const ids: number[] = [];
    const writer = async (w: number) => {
      for (let i = 0; i < 10; i++) {
        const r = await service.handle({ method: 'POST', uri: '/items', headers: RAW, body: JSON.stringify({ name: `${w}.${i}` }) });
        expect(r.status).toBe(201);
        ids.push((JSON.parse(String(r.body)) as Array<{ id: number }>)[0].id);
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    expect(new Set(ids).size).toBe(80);
    const groups = (await journal()).filter((l) => l.w !== undefined);
    expect(groups.length).toBeGreaterThan(1);
    expect(groups.length).toBeLessThan(80);
  } finally {
    await store.close();
  }
});

test('a PATCH that moves a key onto a taken one is 409 in a group of concurrent POSTs', async () => {
  const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false, compaction: MANUAL });
  try {
    const call = (method: string, uri: string, body: unknown) => service.handle({ method, uri, headers: RAW, body: JSON.stringify(body) });
    const [posted, moved] = await Promise.all([call('POST', '/items', { id: 2, name: 'two' }), call('PATCH', '/items/1', { id: 2 })]);
    expect(posted.status).toBe(201);
    expect(moved.status).toBe(409);
    expect((await call('PATCH', '/items/1', { id: 3 })).status).toBe(200);
  } finally {
    await store.close();
  }
});

test('every keyed write acknowledged before a kill -9 is served after the restart, with fewer fsyncs than writes', async () => {
  const server = await start(['serve', file, '-p', '0', '-q']);
  const acknowledged = new Set<number>();
  let next = 1000;
  let killed = false;
  const writer = (generated: boolean) => async () => {
    while (!killed) {
      try {
        const r = await request(server, 'POST', '/items', generated ? { name: 'g' } : { id: next++, name: 'k' });
        if (r.status === 201) acknowledged.add((r.json as Array<{ id: number }>)[0]?.id ?? (r.json as { id: number }).id);
        if (acknowledged.size >= 80 && !killed) {
          killed = true;
          server.proc.kill('SIGKILL');
        }
      } catch {
        return; // the connection the kill cut
      }
    }
  };
  const writers = [...Array.from({ length: 4 }, writer(false)), ...Array.from({ length: 4 }, writer(true))];
  await server.exited;
  await Promise.all(writers);

  // Each group's line is numbered (seq); the file's own checkpoints repeat a number, never add one.
  const appends = Math.max(...(await journal()).map((l) => l.seq));
  expect(appends).toBeLessThan(acknowledged.size);

  const again = await start(['serve', file, '-p', '0', '-q']);
  const served = new Set(((await request(again, 'GET', '/items')).json as Array<{ id: number }>).map((e) => e.id));
  expect([...acknowledged].filter((id) => !served.has(id))).toEqual([]);
  expect((await stop(again)).code).toBe(0);
}, 60000);
