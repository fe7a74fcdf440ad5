import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileService, type CompactionPolicy } from '@resourcery/cli';

/**
 * How often a small data file is compacted under a stream of writes (issue 30): a write
 * group's fsync or a pause between groups longer than the idle wait (20 ms for a small
 * file) used to start a compaction between the groups, each a checkpoint, a rename and
 * three fsyncs in the write queue (37 in 4 s of the CLI-write bench at 1,000 entities). Now
 * no compaction starts for lack of writes while a group is open or appending, and the idle
 * wait doubles each time writes resume right after one (docs/cli-durability.md). Counted
 * with the store's `compactions`, not timed.
 */

/** Extra time each fsync of the journal takes while set (a slow disk, a loaded machine). */
let mockJournalSyncMs = 0;
jest.mock('node:fs/promises', () => {
  const real = jest.requireActual('node:fs/promises');
  return {
    ...real,
    open: async (...args: Parameters<typeof real.open>) => {
      const handle = await real.open(...args);
      // The journal, and the copy a compaction renames over it.
      if (!String(args[0]).includes('.journal')) return handle;
      const datasync = handle.datasync.bind(handle);
      handle.datasync = async () => {
        if (mockJournalSyncMs > 0) await new Promise((resolve) => setTimeout(resolve, mockJournalSyncMs));
        return datasync();
      };
      return handle;
    },
  };
});

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
/** The small file's idle wait, without the bound on how long the file lags under a stream (so only idle compactions are counted). */
const IDLE_ONLY: Partial<CompactionPolicy> = { idleMs: 20, lagMs: 1 << 30 };
let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'resourcery-pace-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: Array.from({ length: 1000 }, (_, i) => ({ id: i + 1, title: `p${i + 1}` })) }));
});
afterEach(async () => {
  mockJournalSyncMs = 0;
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function open(compaction: Partial<CompactionPolicy>) {
  const o = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false, compaction });
  const post = async (title: string) => {
    const r = await o.service.handle({ method: 'POST', uri: '/posts', headers: RAW, body: JSON.stringify({ title }) });
    expect(r.status).toBe(201);
  };
  return { ...o, post };
}

/** Waits (up to ~20 s) until the file holds `count` posts, then returns them. */
async function fileOnceItHolds(count: number): Promise<Array<{ id: number; title: string }>> {
  let posts: Array<{ id: number; title: string }> = [];
  for (let i = 0; i < 400; i++) {
    posts = JSON.parse(await readFile(file, 'utf8')).posts;
    if (posts.length >= count) break;
    await sleep(50);
  }
  return posts;
}

test('no compaction starts while a journal append is pending: slow fsyncs back to back compact once, after the stream', async () => {
  const o = await open(IDLE_ONLY);
  try {
    // Each append now takes longer than the idle wait; the next POST comes as soon as one is answered.
    mockJournalSyncMs = 60;
    for (let i = 0; i < 40; i++) await o.post(`w${i}`);
    // Before, the idle timer ran out during nearly every append: 19 compactions queued between these 40 writes (0 now).
    expect(o.store.compactions).toBeLessThanOrEqual(1);
    mockJournalSyncMs = 0;
    const posts = await fileOnceItHolds(1040);
    expect(posts.slice(1000).map((p) => p.title)).toEqual(Array.from({ length: 40 }, (_, i) => `w${i}`));
    expect(o.store.compactions).toBeLessThanOrEqual(2);
  } finally {
    await o.store.close();
  }
});

test('a stream of writes with pauses longer than the idle wait compacts a few times, and the file shows every write once it stops', async () => {
  const o = await open(IDLE_ONLY);
  try {
    // Every pause outlasts the first idle wait (20 ms): before, each one compacted (27-30 of 30; 2 now).
    for (let i = 0; i < 30; i++) {
      await o.post(`w${i}`);
      await sleep(45);
    }
    // The wait doubles each time writes resume within it (20, 40, 80 ms...): then no pause outlasts it.
    const during = o.store.compactions;
    expect(during).toBeGreaterThanOrEqual(1);
    expect(during).toBeLessThanOrEqual(6);
    const posts = await fileOnceItHolds(1030);
    expect(posts.slice(1000).map((p) => p.title)).toEqual(Array.from({ length: 30 }, (_, i) => `w${i}`));
    // After a quiet period, the next write is in the file as soon as before (the wait is back to 20 ms).
    await sleep(1200);
    const before = o.store.compactions;
    await o.post('after a pause');
    expect((await fileOnceItHolds(1031)).at(-1)!.title).toBe('after a pause');
    expect(o.store.compactions).toBe(before + 1);
  } finally {
    await o.store.close();
  }
});

test('under a stream that never pauses long enough, the file still shows the writes within the lag (1 s for a small file)', async () => {
  const o = await open({ idleMs: 1 << 30, lagMs: 200 });
  try {
    const end = Date.now() + 1500;
    let n = 0;
    while (Date.now() < end) await o.post(`w${n++}`);
    // The idle timer never ran out: only the lag compacted, about every 200 ms of the stream.
    expect(o.store.compactions).toBeGreaterThanOrEqual(1);
    const posts = await fileOnceItHolds(1000 + n);
    expect(posts).toHaveLength(1000 + n);
  } finally {
    await o.store.close();
  }
});
