import { createHash } from 'node:crypto';
import { appendFile, copyFile, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileService, type CompactionPolicy } from '@resourcery/cli';

/**
 * Issue 15 item 3: writes go to an append-only journal beside the data file, fsynced before
 * they are acknowledged, and are compacted into the file in the background and at stop; a
 * start replays what a crash left. "Crash" here = the files copied as they are on disk
 * while the first server still runs: exactly what a kill -9 at that instant leaves.
 */

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
/** Never compacts by itself: the tests say when. */
const MANUAL: CompactionPolicy = { bytes: 1 << 30, idleMs: 1 << 30, maxAgeMs: 1 << 30 };
const FIRST = { posts: [{ id: 1, title: 'first' }] };

/** Posts with ids 1, 2, ... and these titles. */
const numbered = (...titles: string[]) => titles.map((title, i) => ({ id: i + 1, title }));
/** What the journal's first line names its data file by. */
const hashOf = (data: unknown) => createHash('sha1').update(JSON.stringify(data)).digest('hex');

let dir: string;
let file: string;
const opened: Array<Awaited<ReturnType<typeof createFileService>>> = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'resourcery-journal-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify(FIRST));
});
afterEach(async () => {
  for (const { store } of opened.splice(0)) await store.close();
  jest.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

async function openFile(at = file, compaction: Partial<CompactionPolicy> = MANUAL, watch = false) {
  const o = await createFileService({ file: at, apiKeys: [], allowPrivateDestinations: false, compaction, watch });
  opened.push(o);
  return o;
}

type Opened = Awaited<ReturnType<typeof openFile>>;

async function call(o: Opened, method: string, uri: string, body?: unknown) {
  const r = await o.service.handle({ method, uri, headers: RAW, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: r.body === null ? null : JSON.parse(String(r.body)) };
}

const onDisk = async (at = file) => JSON.parse(await readFile(at, 'utf8'));
const journalLines = async (at = file) =>
  (await readFile(`${at}.journal`, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** The data file and its journal as they are on disk now, in another directory (what a kill -9 now would leave). */
async function crashCopy(): Promise<string> {
  const other = path.join(dir, 'crashed');
  await rm(other, { recursive: true, force: true });
  await import('node:fs/promises').then((fs) => fs.mkdir(other));
  const copy = path.join(other, 'db.json');
  await copyFile(file, copy);
  await copyFile(`${file}.journal`, `${copy}.journal`);
  return copy;
}

function quietLog() {
  return jest.spyOn(console, 'error').mockImplementation(() => undefined);
}

test('an acknowledged write is in the fsynced journal, not yet in the file; compaction writes it in and removes the journal', async () => {
  const o = await openFile();
  expect((await call(o, 'POST', '/posts', { title: 'second' })).status).toBe(201);
  expect(await onDisk()).toEqual(FIRST);
  const lines = await journalLines();
  // The first line names the file the journal starts from; then one line per group of writes.
  expect(lines[0]).toEqual({ seq: 0, file: hashOf(FIRST) });
  expect(lines[1]).toEqual({ seq: 1, w: [{ r: 'posts', a: [{ title: 'second', id: 2 }] }] });
  await o.store.compact();
  expect(await onDisk()).toEqual({ posts: [...FIRST.posts, { title: 'second', id: 2 }] });
  expect(await readdir(dir)).toEqual(['db.json']);
});

test('updates and deletes are journaled as the entities they change, at their positions, not as the whole resource', async () => {
  await writeFile(file, JSON.stringify({ posts: numbered('first', 'two', 'three') }));
  const o = await openFile();
  expect((await call(o, 'PATCH', '/posts/2', { title: 'changed' })).status).toBe(200);
  expect((await call(o, 'DELETE', '/posts/3')).status).toBe(200);
  expect((await journalLines()).slice(1)).toEqual([
    { seq: 1, w: [{ r: 'posts', u: [[1, { id: 2, title: 'two' }, { id: 2, title: 'changed' }]] }] },
    { seq: 2, w: [{ r: 'posts', d: [[2, { id: 3, title: 'three' }]] }] },
  ]);
});

test('inserts and updates of one resource in one group: all land, in memory, after a crash and in the file', async () => {
  const o = await openFile();
  const answers = await Promise.all([
    ...Array.from({ length: 5 }, (_, i) => call(o, 'POST', '/posts', { title: `p${i}` })),
    call(o, 'PATCH', '/posts/1', { title: 'patched' }),
    ...Array.from({ length: 5 }, (_, i) => call(o, 'POST', '/posts', { title: `q${i}` })),
  ]);
  expect(answers.map((a) => a.status).sort()).toEqual([...Array(10).fill(201), 200].sort());
  const served = (await call(o, 'GET', '/posts')).body;
  expect(served).toHaveLength(11);
  expect(served[0]).toEqual({ id: 1, title: 'patched' });
  const copy = await crashCopy();
  quietLog();
  expect((await call(await openFile(copy), 'GET', '/posts')).body).toEqual(served);
  await o.store.compact();
  expect((await onDisk()).posts).toEqual(served);
});

test('a restart after a crash replays the journal: inserts, updates, deletes and admin data, then compacts it', async () => {
  await writeFile(file, JSON.stringify({ posts: numbered('first', 'two'), profile: { name: 'Rosa' } }));
  const o = await openFile();
  expect((await call(o, 'POST', '/posts', { title: 'three' })).status).toBe(201);
  expect((await call(o, 'PATCH', '/posts/1', { title: 'changed' })).status).toBe(200);
  expect((await call(o, 'DELETE', '/posts/2')).status).toBe(200);
  expect((await call(o, 'PATCH', '/profile', { city: 'Lyon' })).status).toBe(200);
  expect((await call(o, 'POST', '/Service.Admin.Macro', { Name: 'mine', Uri: '/posts/id=1' })).status).toBe(201);
  const served = (await call(o, 'GET', '/posts')).body;
  const copy = await crashCopy();

  const log = quietLog();
  const again = await openFile(copy);
  expect(log.mock.calls.some((c) => /5 group\(s\) of writes not yet in db.json replayed/.test(String(c[0])))).toBe(true);
  expect((await call(again, 'GET', '/posts')).body).toEqual(served);
  expect((await call(again, 'GET', '/profile')).body).toEqual([{ name: 'Rosa', city: 'Lyon' }]);
  expect((await call(again, 'GET', '/$mine')).body).toEqual([{ id: 1, title: 'changed' }]);
  // The start wrote the journal into the file.
  expect((await onDisk(copy)).posts).toEqual(served);
  expect((await onDisk(copy)).profile).toEqual({ name: 'Rosa', city: 'Lyon' });
  expect(await readdir(path.dirname(copy))).toEqual(['db.json']);
});

test('a torn last record (the write a crash cut off, never acknowledged) is ignored', async () => {
  const o = await openFile();
  expect((await call(o, 'POST', '/posts', { title: 'acknowledged' })).status).toBe(201);
  const copy = await crashCopy();
  await appendFile(`${copy}.journal`, '{"seq":2,"w":[{"r":"posts","a":[{"title":"never acknow');
  const log = quietLog();
  const again = await openFile(copy);
  expect(log.mock.calls.some((c) => /incomplete record/.test(String(c[0])))).toBe(true);
  expect((await call(again, 'GET', '/posts/_/select=title')).body).toEqual([{ title: 'first' }, { title: 'acknowledged' }]);
  // Writes after it go on normally.
  expect((await call(again, 'POST', '/posts', { title: 'later' })).status).toBe(201);
  await again.store.compact();
  expect((await onDisk(copy)).posts.map((p: { title: string }) => p.title)).toEqual(['first', 'acknowledged', 'later']);
});

test('a journal holding only its first checkpoint (a crash right after creating it) is removed at start', async () => {
  const copy = path.join(dir, 'other.json');
  await writeFile(copy, JSON.stringify(FIRST));
  await writeFile(`${copy}.journal`, `${JSON.stringify({ seq: 0, file: hashOf(FIRST) })}\n`);
  const again = await openFile(copy);
  expect((await call(again, 'GET', '/posts')).body).toEqual(FIRST.posts);
  expect((await readdir(dir)).sort()).toEqual(['db.json', 'other.json']);
});

test('a long journal (more lines than a call takes arguments) is replayed, and numbering goes on after it', async () => {
  const hash = hashOf(FIRST);
  const lines = [JSON.stringify({ seq: 0, file: hash })];
  for (let seq = 1; seq <= 200_000; seq++) lines.push(JSON.stringify({ seq, w: [] }));
  lines.push(JSON.stringify({ seq: 200_001, w: [{ r: 'posts', a: [{ id: 2, title: 'last' }] }] }));
  await writeFile(`${file}.journal`, `${lines.join('\n')}\n`);
  quietLog();
  const o = await openFile(file, { ...MANUAL });
  expect((await call(o, 'GET', '/posts/_/select=title')).body).toEqual([{ title: 'first' }, { title: 'last' }]);
  expect((await call(o, 'POST', '/posts', { title: 'next' })).status).toBe(201);
  expect((await journalLines()).at(-1).seq).toBe(200_002);
});

test('a damaged journal (a bad line followed by good ones) stops the start and changes nothing', async () => {
  const o = await openFile();
  expect((await call(o, 'POST', '/posts', { title: 'a' })).status).toBe(201);
  const copy = await crashCopy();
  const damaged = (await readFile(`${copy}.journal`, 'utf8')).replace('"w":', '"w":#');
  await writeFile(`${copy}.journal`, `${damaged}{"seq":9,"w":[]}\n`);
  await expect(openFile(copy)).rejects.toThrow(/db\.json\.journal is damaged at byte \d+/);
  expect(await readFile(`${copy}.journal`, 'utf8')).toBe(`${damaged}{"seq":9,"w":[]}\n`);
  expect(await onDisk(copy)).toEqual(FIRST);
});

test('a crash between the rename of a compaction and the journal rewrite does not apply the compacted writes twice', async () => {
  const o = await openFile();
  expect((await call(o, 'POST', '/posts', { title: 'in the file' })).status).toBe(201);
  // The journal rewrite fails after the rename (its temp path is taken): the files are left as such a crash leaves them.
  await import('node:fs/promises').then((fs) => fs.mkdir(`${file}.journal.${process.pid}.tmp`));
  const log = quietLog();
  const compacting = o.store.compact();
  // Taken after the compaction's cut (a request takes longer to reach the store), so the journal keeps it.
  expect((await call(o, 'POST', '/posts', { title: 'after' })).status).toBe(201);
  await expect(compacting).rejects.toThrow();
  expect((await onDisk()).posts).toHaveLength(2);
  const copy = await crashCopy();
  const again = await openFile(copy);
  expect((await call(again, 'GET', '/posts/_/select=title')).body).toEqual([
    { title: 'first' },
    { title: 'in the file' },
    { title: 'after' },
  ]);
  log.mockRestore();
  await rm(`${file}.journal.${process.pid}.tmp`, { recursive: true });
});

test('writes during a compaction all land; the time threshold compacts without a call', async () => {
  const o = await openFile(file, { ...MANUAL, idleMs: 50 });
  const writes = Array.from({ length: 30 }, (_, i) => call(o, 'POST', '/posts', { title: `p${i}` }));
  const compacting = o.store.compact();
  expect((await Promise.all(writes)).every((w) => w.status === 201)).toBe(true);
  await compacting;
  // Whatever the first compaction missed, the idle timer writes in.
  for (let i = 0; i < 100 && (await onDisk()).posts.length < 31; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect((await onDisk()).posts).toEqual((await call(o, 'GET', '/posts')).body);
  expect((await onDisk()).posts).toHaveLength(31);
  for (let i = 0; i < 100 && (await readdir(dir)).length > 1; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await readdir(dir)).toEqual(['db.json']);
});

test('the size threshold compacts while writes go on', async () => {
  const o = await openFile(file, { ...MANUAL, bytes: 2000 });
  for (let i = 0; i < 40; i++) expect((await call(o, 'POST', '/posts', { title: `p${i}`, pad: 'x'.repeat(100) })).status).toBe(201);
  await o.store.idle();
  // About every 2,000 bytes of journal were written into the file: only the last few writes can be missing.
  expect((await onDisk()).posts.length).toBeGreaterThan(20);
});

describe('hand edits and a journal not yet compacted: the edit is loaded, and the journaled writes it lacks apply on top', () => {
  test('edited while the server was stopped after a crash', async () => {
    await writeFile(file, JSON.stringify({ posts: numbered('first', 'two') }));
    const o = await openFile();
    expect((await call(o, 'POST', '/posts', { title: 'by api' })).status).toBe(201);
    expect((await call(o, 'PATCH', '/posts/1', { title: 'patched by api' })).status).toBe(200);
    expect((await call(o, 'PATCH', '/posts/2', { title: 'two by api' })).status).toBe(200);
    const copy = await crashCopy();
    // The hand edit changes entity 1 itself (it wins over the journaled PATCH of it) and adds one.
    await writeFile(
      copy,
      JSON.stringify({
        posts: [
          { id: 1, title: 'by hand' },
          { id: 2, title: 'two' },
          { id: 9, title: 'added by hand' },
        ],
      }),
    );
    const log = quietLog();
    const again = await openFile(copy);
    expect(log.mock.calls.some((c) => /on top of db.json, which was edited since/.test(String(c[0])))).toBe(true);
    expect(
      log.mock.calls.some((c) =>
        /1 journaled update\(s\) or delete\(s\) target entities the edit of db.json changed: the edit wins/.test(String(c[0])),
      ),
    ).toBe(true);
    expect((await call(again, 'GET', '/posts')).body).toEqual([
      { id: 1, title: 'by hand' },
      { id: 2, title: 'two by api' },
      { id: 9, title: 'added by hand' },
      { title: 'by api', id: 3 },
    ]);
    expect((await onDisk(copy)).posts).toHaveLength(4);
  });

  test('edited while the server runs with --watch', async () => {
    const o = await openFile(file, MANUAL, true);
    expect((await call(o, 'POST', '/posts', { id: 2, title: 'by api' })).status).toBe(201);
    expect(await onDisk()).toEqual(FIRST);
    const log = quietLog();
    // An editor's save (temp file renamed over the data file), based on the file as it shows: without the journaled write.
    await writeFile(
      `${file}.edit`,
      JSON.stringify({
        posts: [
          { id: 1, title: 'by hand' },
          { id: 7, title: 'added by hand' },
        ],
      }),
    );
    await rename(`${file}.edit`, file);
    const expected = [
      { id: 1, title: 'by hand' },
      { id: 7, title: 'added by hand' },
      { id: 2, title: 'by api' },
    ];
    for (let i = 0; i < 100 && (await call(o, 'GET', '/posts')).body[0].title !== 'by hand'; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call(o, 'GET', '/posts')).body).toEqual(expected);
    expect(log.mock.calls.some((c) => /journaled writes it lacks are applied on top/.test(String(c[0])))).toBe(true);
    // A write after the reload lands on the merged data; the stop writes it all into the file.
    expect((await call(o, 'POST', '/posts', { id: 8, title: 'after' })).status).toBe(201);
    await o.store.close();
    opened.splice(0);
    expect((await onDisk()).posts).toEqual([...expected, { id: 8, title: 'after' }]);
    expect(await readdir(dir)).toEqual(['db.json']);
  });
});
