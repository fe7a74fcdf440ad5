import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createService, MemoryStorage } from '@resourcery/core';
import { createFileService } from '@resourcery/cli';

/** A resource declares only the change events its methods can raise (docs/events.md). */

const RAW = { accept: 'application/json;raw=true' };

async function names(service: { handle: ReturnType<typeof createService>['handle'] }): Promise<string[]> {
  const r = await service.handle({ method: 'GET', uri: '/', headers: RAW });
  return (JSON.parse(String(r.body)) as Array<{ Name: string }>).map((e) => e.Name);
}

test('a one-entity resource of the data file lists .Updated only; an array all three', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-events-'));
  const file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: [{ id: 1 }], profile: { name: 'Rosa' } }));
  const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false });
  try {
    const listed = await names(service);
    expect(listed.filter((n) => n.startsWith('profile.'))).toEqual(['profile.Updated']);
    expect(listed.filter((n) => n.startsWith('posts.'))).toEqual(['posts.Inserted', 'posts.Updated', 'posts.Deleted']);
    // The event it lists is raised.
    const seen: string[] = [];
    service.events.subscribe((event) => void seen.push(event.name));
    const headers = { ...RAW, 'content-type': 'application/json' };
    expect((await service.handle({ method: 'PATCH', uri: '/profile', headers, body: '{"city":"Lyon"}' })).status).toBe(200);
    expect(seen).toEqual(['profile.Updated']);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a read-only resource raises no events; one without DELETE no .Deleted', async () => {
  const service = createService();
  service.addResource({ name: 'Report', methods: ['GET', 'HEAD'], storage: new MemoryStorage([{ Id: 1 }]) });
  service.addResource({ name: 'Log', methods: ['GET', 'POST'], storage: new MemoryStorage() });
  const listed = await names(service);
  expect(listed.filter((n) => n.startsWith('Report.'))).toEqual([]);
  expect(listed.filter((n) => n.startsWith('Log.'))).toEqual(['Log.Inserted', 'Log.Updated']);
});
