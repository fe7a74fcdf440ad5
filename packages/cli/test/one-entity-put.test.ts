import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from '@resourcery/node';
import { createFileService } from '@resourcery/cli';

/**
 * A one-entity resource (a top-level object in the data file) always holds exactly its one
 * entity: a PUT whose conditions match it updates it; one whose conditions match nothing
 * is 404, as a PATCH is, and inserts no second entity (docs/cli.md).
 */

const RAW = { accept: 'application/json;raw=true' };

test.each(['handle', 'http'])('PUT with conditions that miss the one entity inserts nothing (%s)', async (transport) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-one-put-'));
  const file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: [{ id: 1 }], profile: { name: 'Rosa' } }));
  const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false });
  const server = createServer(service);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (method: string, uri: string, body?: unknown) => {
    const headers = body === undefined ? RAW : { ...RAW, 'content-type': 'application/json' };
    const text = body === undefined ? undefined : JSON.stringify(body);
    if (transport === 'http') {
      const r = await fetch(base + uri, { method, headers, body: text });
      return { status: r.status, text: await r.text() };
    }
    const r = await service.handle({ method, uri, headers, body: text });
    return { status: r.status, text: r.body === null ? '' : String(r.body) };
  };
  try {
    const missed = await call('PUT', '/profile/name=Nobody', { city: 'Oslo' });
    expect(missed.status).toBe(404);
    expect(JSON.parse(missed.text).ErrorCode).toBe('NotFound');
    expect(JSON.parse((await call('GET', '/profile')).text)).toEqual([{ name: 'Rosa' }]);
    // The conditions match it: it is updated, as before.
    expect((await call('PUT', '/profile/name=Rosa', { city: 'Lyon' })).status).toBe(200);
    expect((await call('PUT', '/profile', { city: 'Nice' })).status).toBe(200);
    expect(JSON.parse((await call('GET', '/profile')).text)).toEqual([{ name: 'Rosa', city: 'Nice' }]);
    // A keyed array still inserts on a PUT that matches nothing.
    expect((await call('PUT', '/posts/id=2', { title: 'b' })).status).toBe(201);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  }
  expect(JSON.parse(await readFile(file, 'utf8')).profile).toEqual({ name: 'Rosa', city: 'Nice' });
  await rm(dir, { recursive: true, force: true });
});
