import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { bodyText } from './handle-support';

/**
 * X-Resourcery-Uri (docs/uri.md#browsers): Chromium sends a `|` of a path as `%7C`, a literal
 * `|` for the service; a page sends the URI as written beside it. The header only says
 * which `%7C` were a written `|`: anything else in it is ignored, and rights and row rules
 * are those of the path.
 */
function shop(): Service {
  const service = createService({
    apiKeys: [{ key: 'red', allow: [{ resources: ['Item'], methods: ['GET'] }] }],
  });
  service.addResource({
    name: 'Item',
    key: 'Id',
    storage: new MemoryStorage([
      { Id: 1, Team: 'red', Note: 'a|b' },
      { Id: 2, Team: 'blue', Note: 'c' },
      { Id: 3, Team: 'red', Note: 'c' },
      { Id: 4, Team: 'red', Note: 'd' },
    ]),
    rules: { rows: () => 'Team=red' },
  });
  service.addResource({ name: 'Secret', key: 'Id', storage: new MemoryStorage([{ Id: 1, Code: 'x' }]) });
  return service;
}

async function ids(service: Service, uri: string, typed?: string): Promise<{ status: number; ids: number[] }> {
  const headers: Record<string, string> = { authorization: 'apikey red', accept: 'application/json;raw=true' };
  if (typed !== undefined) headers['x-resourcery-uri'] = typed;
  const res = await service.handle({ method: 'GET', uri, headers });
  const text = await bodyText(res.body);
  return { status: res.status, ids: res.status === 200 ? (JSON.parse(text) as Array<{ Id: number }>).map((e) => e.Id) : [] };
}

describe('X-Resourcery-Uri', () => {
  const service = shop();
  afterAll(() => service.close());

  test('the path as Chromium sends it finds no alternatives; with the URI as written they are OR', async () => {
    expect(await ids(service, '/Item/Id=1%7C3%7C4')).toEqual({ status: 204, ids: [] });
    expect(await ids(service, '/Item/Id=1%7C3%7C4', '/Item/Id=1|3|4')).toEqual({ status: 200, ids: [1, 3, 4] });
    expect(await ids(service, '/Item/Id=1%7C3/select=Id&order_desc=Id', '/Item/Id=1|3/select=Id&order_desc=Id')).toEqual({
      status: 200,
      ids: [3, 1],
    });
  });

  test('a %7C written as such stays a literal `|` inside a value', async () => {
    expect(await ids(service, '/Item/Note=a%7Cb%7CNote=d', '/Item/Note=a%7Cb|Note=d')).toEqual({ status: 200, ids: [1, 4] });
  });

  test('the row rule of the path still applies: an alternative outside it finds nothing', async () => {
    // Item 2 is blue: the caller's rule (Team=red) hides it whichever way the OR is sent.
    expect(await ids(service, '/Item/Id=1|2')).toEqual({ status: 200, ids: [1] });
    expect(await ids(service, '/Item/Id=1%7C2', '/Item/Id=1|2')).toEqual({ status: 200, ids: [1] });
  });

  test('a header that is not the path with some `|` sent as %7C is ignored', async () => {
    // Another value, another resource, a longer URI, a `|` where the path has none: the path is served as it came.
    expect(await ids(service, '/Item/Id=1%7C3', '/Item/Id=1|4')).toEqual({ status: 204, ids: [] });
    expect(await ids(service, '/Item/Id=1%7C3', '/Item/Id=1|3&Team=red|blue')).toEqual({ status: 204, ids: [] });
    expect(await ids(service, '/Item/Id=4', '/Item/Id=1|4')).toEqual({ status: 200, ids: [4] });
    expect(await ids(service, '/Item/Id=1%7C3', '/Item/Id=1%7C3')).toEqual({ status: 204, ids: [] });
    // The key may not read Secret: naming it in the header changes nothing, and the path's resource is refused as before.
    expect((await ids(service, '/Secret/Id=1%7C2', '/Secret/Id=1|2')).status).toBe(403);
    expect(await ids(service, '/Item/Id=1%7C2', '/Secret/Id=1|2')).toEqual({ status: 204, ids: [] });
  });
});
