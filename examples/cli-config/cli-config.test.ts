import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compacted, killAll, request, requireBuiltCli, start } from '../../packages/cli/test/cli-support';

/** The example of examples/cli-config/README.md, run against the built CLI. */

let dir: string;

beforeAll(requireBuiltCli);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-example-'));
  for (const f of ['db.json', 'resourcery.config.json']) await copyFile(path.join(__dirname, f), path.join(dir, f));
});

afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

test('the reader reads the view; the editor writes posts and the one-entity profile; the schema refuses a bad post', async () => {
  const server = await start(['serve', 'db.json', '--port', '0'], dir);
  const reader = { authorization: 'apikey reader-key' };
  const editor = { authorization: 'apikey editor-key' };
  expect((await request(server, 'GET', '/posts-published/_/select=title,views', undefined, reader)).json).toEqual([
    { title: 'json-server', views: 120 },
    { title: 'Resourcery', views: 15 },
  ]);
  expect((await request(server, 'POST', '/posts', { title: 'New' }, reader)).status).toBe(403);
  expect((await request(server, 'POST', '/posts', { title: 'New', views: 0, draft: true }, editor)).status).toBe(201);
  const refused = await request(server, 'POST', '/posts', { title: '', views: -1 }, editor);
  expect(refused.status).toBe(400);
  expect(refused.text).toMatch(/views/);
  expect((await request(server, 'PATCH', '/profile', { name: 'me' }, editor)).status).toBe(200);
  // Durable at once in db.json.journal; written into db.json soon after.
  await compacted(path.join(dir, 'db.json'));
  const saved = JSON.parse(await readFile(path.join(dir, 'db.json'), 'utf8'));
  expect(saved.profile).toEqual({ name: 'me' });
  expect(saved.posts).toHaveLength(4);
  const preflight = await request(server, 'OPTIONS', '/posts', undefined, {
    origin: 'https://blog.example',
    'access-control-request-method': 'POST',
  });
  expect(preflight.status).toBe(204);
});
