import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileService } from '@resourcery/cli';

/**
 * With --watch, an edit saved right after a compaction renamed its file into place (before
 * the store looked at the file again) is loaded, not taken for the store's own file and
 * overwritten later: the store keeps the stamp of the file it wrote, taken before the
 * rename (docs/cli-durability.md#--watch-edits-made-outside-the-server).
 */

/** Runs once, right after the store's next rename of a temp file over the data file. */
let mockAfterRename: (() => Promise<void>) | null = null;
jest.mock('node:fs/promises', () => {
  const real = jest.requireActual('node:fs/promises');
  return {
    ...real,
    rename: async (from: string, to: string) => {
      await real.rename(from, to);
      const after = from.endsWith('.tmp') ? mockAfterRename : null;
      if (after) {
        mockAfterRename = null;
        await after();
      }
    },
  };
});

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'resourcery-stamp-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('an edit landing just after a compaction renamed its file is loaded, not overwritten', async () => {
  const file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: [{ id: 1, title: 'first' }] }));
  const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false, watch: true });
  const log = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const titles = async () => {
    const r = await service.handle({ method: 'GET', uri: '/posts', headers: RAW });
    return (JSON.parse(String(r.body)) as Array<{ title: string }>).map((p) => p.title);
  };
  try {
    const r = await service.handle({ method: 'POST', uri: '/posts', headers: RAW, body: JSON.stringify({ id: 2, title: 'w2' }) });
    expect(r.status).toBe(201);
    const real = jest.requireActual('node:fs/promises');
    mockAfterRename = async () => {
      // An editor's save (temp file renamed over the data file) of the file just written.
      const copy = JSON.parse(await real.readFile(file, 'utf8'));
      copy.posts[0].title = 'by hand';
      await real.writeFile(`${file}.edit`, JSON.stringify(copy));
      await real.rename(`${file}.edit`, file);
    };
    await store.compact();
    expect(mockAfterRename).toBeNull();
    // A write checks the file first (as the watcher's own check does): the edit is loaded.
    let status = 0;
    for (let i = 0; i < 3 && status !== 201; i++)
      status = (await service.handle({ method: 'POST', uri: '/posts', headers: RAW, body: JSON.stringify({ id: 3, title: 'w3' }) })).status;
    expect(status).toBe(201);
    await store.idle();
    expect(await titles()).toEqual(['by hand', 'w2', 'w3']);
    await store.compact();
    expect(JSON.parse(await readFile(file, 'utf8')).posts.map((p: { title: string }) => p.title)).toEqual(['by hand', 'w2', 'w3']);
  } finally {
    await store.close();
    log.mockRestore();
  }
});
