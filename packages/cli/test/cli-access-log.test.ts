import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { killAll, request, requireBuiltCli, run, start, type Running } from './cli-support';

/** The CLI's access log: one line per request on stdout, --log json, off with --quiet (docs/operations.md). */

let dir: string;
let file: string;

beforeAll(requireBuiltCli);
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-log-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: [{ id: 1, title: 'Hello' }] }));
});
afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** The lines printed after the banner, once there are `count` of them. */
async function logLines(server: Running, count: number): Promise<string[]> {
  const lines = () => server.output().split('Ctrl+C to stop').slice(1).join('').split('\n').slice(1).filter(Boolean);
  for (let i = 0; i < 500 && lines().length < count; i++) await new Promise((r) => setTimeout(r, 20));
  return lines();
}

test('one text line per request: method, URI, status, time, length', async () => {
  const server = await start(['serve', file, '--port', '0']);
  await request(server, 'GET', '/posts/id=1');
  await request(server, 'GET', '/nothing');
  await request(server, 'POST', '/posts', { id: 2, title: 'Again' });
  const lines = await logLines(server, 3);
  expect(lines).toHaveLength(3);
  expect(lines[0]).toMatch(/^GET \/posts\/id=1 200 \d+(\.\d)? ms \d+ B$/);
  expect(lines[1]).toMatch(/^GET \/nothing 404 \d+(\.\d)? ms/);
  expect(lines[2]).toMatch(/^POST \/posts 201 \d+(\.\d)? ms/);
});

test('--log json: one JSON object per request', async () => {
  const server = await start(['serve', file, '--port', '0', '--log', 'json']);
  const answer = await request(server, 'GET', '/posts');
  const [line] = await logLines(server, 1);
  const entry = JSON.parse(line);
  expect(entry).toMatchObject({ method: 'GET', uri: '/posts', status: 200, bytes: Buffer.byteLength(answer.text), remote: '127.0.0.1' });
  expect(entry.ms).toEqual(expect.any(Number));
  expect(new Date(entry.time).toISOString()).toBe(entry.time);
});

test('--quiet prints the URL line and no access log; --log takes text or json only', async () => {
  const server = await start(['serve', file, '--port', '0', '-q']);
  await request(server, 'GET', '/posts');
  await request(server, 'GET', '/posts');
  await new Promise((r) => setTimeout(r, 200));
  expect(server.output().trim().split('\n')).toHaveLength(1);
  const wrong = await run(['serve', file, '--log', 'xml']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toMatch(/--log must be text or json, not 'xml'/);
});
