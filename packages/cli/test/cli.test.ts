import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FileStore } from '@resourcery/cli';
import { compacted, killAll, requireBuiltCli, run as runCli, start, stop, type Finished, type Running } from './cli-support';

/** `resourcery serve <data.json>` end to end, with the built CLI (DESIGN 9). */

const DATA = {
  'Garden.Bed': [
    { Id: 1, Crop: 'Kale', Rows: 4 },
    { Id: 2, Crop: 'Leek', Rows: 2 },
    { Id: 3, Crop: 'Bean', Rows: 6 },
  ],
  Gardener: [{ Name: 'Rosa' }],
};

let dir: string;
let file: string;

beforeAll(requireBuiltCli);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-cli-'));
  file = path.join(dir, 'garden.json');
  await writeFile(file, JSON.stringify(DATA));
});

afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** Starts `serve` on the test's data file at a free port. */
function serve(...args: string[]): Promise<Running> {
  return start(['serve', file, '--port', '0', ...args]);
}

/** Runs the CLI to completion. */
function run(...args: string[]): Promise<Finished> {
  return runCli(args);
}

async function request(server: Running, method: string, uri: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + uri, {
    method,
    headers: { accept: 'application/json;raw=true', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

/** The file once the server has written its journal into it. */
async function onDisk(): Promise<Record<string, unknown[]>> {
  await compacted(file);
  return JSON.parse(await readFile(file, 'utf8'));
}

describe('serve: each top-level array of the file is a resource', () => {
  test('it prints the URL it listens on and answers queries', async () => {
    const server = await serve();
    const r = await request(server, 'GET', '/Garden.Bed/Rows>3/order_desc=Rows');
    expect(r.status).toBe(200);
    expect(r.json.map((b: { Crop: string }) => b.Crop)).toEqual(['Bean', 'Kale']);
    expect((await request(server, 'GET', '/bed/Id=2')).json).toEqual([DATA['Garden.Bed'][1]]);
    expect((await request(server, 'GET', '/Gardener')).json).toEqual(DATA.Gardener);
  });

  test('every resource has every method; the listing names them', async () => {
    const server = await serve();
    const r = await request(server, 'GET', '/Service.AvailableResource/Name=Garden.Bed');
    expect(r.json[0].Methods.slice().sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'REPORT']);
  });
});

describe('changes are durable before the response and written back to the file soon after', () => {
  test('POST, PATCH and DELETE each show in the file; no temp file is left', async () => {
    const server = await serve();
    expect((await request(server, 'POST', '/Garden.Bed', { Id: 4, Crop: 'Pea', Rows: 3 })).status).toBe(201);
    expect((await onDisk())['Garden.Bed']).toContainEqual({ Id: 4, Crop: 'Pea', Rows: 3 });

    expect((await request(server, 'PATCH', '/Garden.Bed/Id=1', { Rows: 5 })).status).toBe(200);
    expect((await onDisk())['Garden.Bed'][0]).toEqual({ Id: 1, Crop: 'Kale', Rows: 5 });

    expect((await request(server, 'DELETE', '/Garden.Bed/Id=2')).json).toEqual([]);
    expect((await onDisk())['Garden.Bed'].map((b: any) => b.Id)).toEqual([1, 3, 4]);
    expect((await onDisk()).Gardener).toEqual(DATA.Gardener);

    expect(await readdir(dir)).toEqual(['garden.json']);
  });

  test('a refused change leaves the file as it was', async () => {
    const server = await serve();
    expect((await request(server, 'DELETE', '/Garden.Bed/Rows>0')).status).toBe(400);
    expect(await onDisk()).toEqual(DATA);
  });

  test('after a restart the changes are still there', async () => {
    const first = await serve();
    await request(first, 'POST', '/Garden.Bed', { Id: 4, Crop: 'Pea', Rows: 3 });
    await request(first, 'PATCH', '/Garden.Bed/Crop=Leek', { Rows: 9 });
    await request(first, 'DELETE', '/Gardener/Name=Rosa');
    expect((await stop(first)).code).toBe(0);

    const second = await serve();
    expect((await request(second, 'GET', '/Garden.Bed/_/select=Crop,Rows')).json).toEqual([
      { Crop: 'Kale', Rows: 4 },
      { Crop: 'Leek', Rows: 9 },
      { Crop: 'Bean', Rows: 6 },
      { Crop: 'Pea', Rows: 3 },
    ]);
    expect((await request(second, 'GET', '/Gardener')).status).toBe(204);
  });

  test('concurrent writes are all acknowledged and all persist', async () => {
    const server = await serve();
    const writes = Array.from({ length: 40 }, (_, i) => request(server, 'POST', '/Gardener', { Name: `G${i}` }));
    expect((await Promise.all(writes)).map((r) => r.status)).toEqual(Array(40).fill(201));
    const names = (await onDisk()).Gardener.map((g: any) => g.Name);
    expect(names).toHaveLength(41);
    expect(new Set(names)).toEqual(new Set(['Rosa', ...Array.from({ length: 40 }, (_, i) => `G${i}`)]));
    expect(await readdir(dir)).toEqual(['garden.json']);
    await stop(server);
    const again = await serve();
    expect((await request(again, 'REPORT', '/Gardener')).json).toBe(41);
  });
});

describe('macros and webhooks are kept in the file too; error records are not', () => {
  test('a macro and a webhook survive a restart, stored under Service.* keys that are not resources', async () => {
    const first = await serve();
    expect((await request(first, 'POST', '/Service.Admin.Macro', { Name: 'wide', Uri: '/Garden.Bed/Rows>3' })).status).toBe(201);
    expect(
      (
        await request(first, 'POST', '/Service.Admin.Webhook', {
          Label: 'beds',
          Destination: '/Gardener',
          EventSelector: '/Garden.Bed.Inserted',
        })
      ).status,
    ).toBe(201);
    expect((await request(first, 'GET', '/Nowhere')).status).toBe(404);
    const disk = await onDisk();
    expect(disk['Service.Admin.Macro']).toEqual([expect.objectContaining({ Name: 'wide', Uri: '/Garden.Bed/Rows>3' })]);
    expect(disk['Service.Admin.Webhook']).toEqual([expect.objectContaining({ Label: 'beds' })]);
    expect(disk['Service.Admin.Error']).toBeUndefined();
    expect((await stop(first)).code).toBe(0);

    const second = await serve();
    expect((await request(second, 'GET', '/$wide/_/select=Crop')).json).toEqual([{ Crop: 'Kale' }, { Crop: 'Bean' }]);
    expect((await request(second, 'GET', '/Service.Admin.Webhook/_/select=Label')).json).toEqual([{ Label: 'beds' }]);
    const listed = (await request(second, 'GET', '/Service.AvailableResource/_/select=Name')).json.map((r: { Name: string }) => r.Name);
    expect(listed.filter((n: string) => n === 'Service.Admin.Macro')).toHaveLength(1);
  });
});

describe('FileStore: writes that arrive together share one journal append (group commit)', () => {
  const journalWrites = async () => (await readFile(`${file}.journal`, 'utf8')).split('\n').filter((l) => l.includes('"w"')).length;

  test('20 concurrent writes cause far fewer than 20 appends, and all are saved', async () => {
    const store = await FileStore.load(file);
    const storage = store.storage('Gardener');
    await Promise.all(Array.from({ length: 20 }, (_, i) => storage.write({ insert: [{ Name: `N${i}` }] })));
    expect(await journalWrites()).toBeGreaterThanOrEqual(1);
    expect(await journalWrites()).toBeLessThanOrEqual(2);
    await store.close();
    expect((await onDisk()).Gardener).toHaveLength(21);
    expect(await readdir(dir)).toEqual(['garden.json']);
  });

  test('a write that arrives while an append runs is saved by the next one', async () => {
    const store = await FileStore.load(file);
    const storage = store.storage('Gardener');
    const first = storage.write({ insert: [{ Name: 'First' }] });
    await new Promise((r) => setImmediate(r));
    const second = storage.write({ insert: [{ Name: 'Second' }] });
    await Promise.all([first, second]);
    await store.close();
    expect((await onDisk()).Gardener.map((g: any) => g.Name)).toEqual(['Rosa', 'First', 'Second']);
  });
});

describe('--api-key requires the key', () => {
  test('without the key: 401; with it (apikey or Basic): served', async () => {
    const server = await serve('--api-key', 'pea-pod', '--api-key', 'bean-pod');
    expect((await request(server, 'GET', '/Gardener')).status).toBe(401);
    expect((await request(server, 'GET', '/Gardener', undefined, { authorization: 'apikey wrong' })).status).toBe(401);
    expect((await request(server, 'GET', '/Gardener', undefined, { authorization: 'apikey pea-pod' })).status).toBe(200);
    const basic = `Basic ${Buffer.from(':bean-pod').toString('base64')}`;
    expect((await request(server, 'POST', '/Gardener', { Name: 'Ivo' }, { authorization: basic })).status).toBe(201);
    expect((await onDisk()).Gardener).toHaveLength(2);
  });
});

describe('usage and start-up failures', () => {
  test('--help prints the usage and exits 0', async () => {
    const r = await run('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: resourcery serve <data\.json>/);
    expect(r.stdout).toMatch(/--api-key/);
  });

  test('a missing data file exits non-zero naming the file', async () => {
    const missing = path.join(dir, 'nope.json');
    const r = await run('serve', missing, '--port', '0');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(missing);
    expect(r.stderr).toMatch(/no such file|not found|cannot/i);
    expect(r.stdout).not.toMatch(/http:\/\//);
  });

  test.each([
    ['not JSON', '{"Gardener": [', /not valid JSON/],
    ['a JSON array', '[{"Name":"Rosa"}]', /JSON object/],
    ['a property that is not an array of objects', '{"Gardener": [1, 2]}', /"Gardener".*array of objects/],
    ['a property name that cannot be a resource', '{"Green house": []}', /Green house/],
  ])('a data file holding %s exits non-zero with a clear message', async (_what, content, message) => {
    await writeFile(file, content);
    const r = await run('serve', file, '--port', '0');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
  });

  test('a bad --port exits non-zero with a message', async () => {
    const r = await run('serve', file, '--port', 'seven');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--port/);
  });

  test('an unknown command prints the usage and exits non-zero', async () => {
    const r = await run('serev', file);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Usage/);
  });
});

describe('signals stop the server', () => {
  test('SIGTERM: the process exits with 0 and the port is closed', async () => {
    const server = await serve();
    expect((await request(server, 'GET', '/Gardener')).status).toBe(200);
    expect(await stop(server)).toEqual({ code: 0, signal: null });
    await expect(fetch(`${server.url}/Gardener`)).rejects.toThrow();
  });

  test('SIGINT does the same', async () => {
    const server = await serve();
    server.proc.kill('SIGINT');
    expect((await server.exited).code).toBe(0);
  });
});
