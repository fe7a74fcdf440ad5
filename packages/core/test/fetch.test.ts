import { createService, MemoryStorage, type Service } from '@resourcery/core';

/** service.fetch: the same contract as service.handle over Fetch API Request and Response. */

let service: Service;

beforeEach(() => {
  service = createService();
  service.addResource({
    name: 'Garden.Plant',
    storage: new MemoryStorage([
      { Name: 'Fern', Height: 40 },
      { Name: 'Moss', Height: 2 },
    ]),
  });
});

describe('service.fetch answers Fetch requests like service.handle', () => {
  test('a GET with conditions and meta-conditions (operators re-encoded by URL) gives the JSON envelope', async () => {
    const res = await service.fetch(new Request('http://x/Garden.Plant/Height>10/select=Name'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ Status: 'success', Data: [{ Name: 'Fern' }], DataCount: 1 });
  });

  test('a query string reaches the core, which refuses it with the path form', async () => {
    const res = await service.fetch(new Request('http://x/api/Garden.Plant?Name=Fern'), { basePath: '/api' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { Message: string }).Message).toContain('/Garden.Plant/Name=Fern');
  });

  test('a POST body is read from the Request', async () => {
    const res = await service.fetch(
      new Request('http://x/Plant', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ Name: 'Ivy', Height: 300 }),
      }),
    );
    expect(res.status).toBe(201);
    expect(((await res.json()) as { InsertedCount: number }).InsertedCount).toBe(1);
  });

  test('errors carry ErrorInfo with the base path', async () => {
    const res = await service.fetch(new Request('http://x/api/Nothing'), { basePath: '/api' });
    expect(res.status).toBe(404);
    expect(res.headers.get('errorinfo')).toMatch(/^\/api\/Service\.Admin\.Error\/id=\S+$/);
  });
});

describe('service.fetch honours the base path', () => {
  test('the path after the base path is the service URI, also with a trailing slash on the base', async () => {
    const res = await service.fetch(new Request('http://x/api/Plant/Name=Moss', { headers: { accept: 'application/json;raw=true' } }), {
      basePath: '/api/',
    });
    expect(await res.json()).toEqual([{ Name: 'Moss', Height: 2 }]);
  });

  test('a path outside the base path is 404 and never reaches a resource', async () => {
    for (const url of ['http://x/apiary/Plant', 'http://x/Plant']) {
      const res = await service.fetch(new Request(url), { basePath: '/api' });
      expect([url, res.status]).toEqual([url, 404]);
      expect(res.headers.get('errorinfo')).toBeNull();
    }
  });
});

describe('service.fetch streams the request body', () => {
  test('a body over maxBodyBytes is refused with 413 before it is read to the end', async () => {
    const small = createService({ maxBodyBytes: 1024 });
    small.addResource({ name: 'Plant' });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        if (pulled > 1000) controller.close();
        else controller.enqueue(new Uint8Array(512).fill(32));
      },
    });
    const res = await small.fetch(
      new Request('http://x/Plant', {
        method: 'POST',
        body,
        duplex: 'half',
        headers: { 'content-type': 'application/json' },
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(pulled).toBeLessThan(1000);
  });
});
