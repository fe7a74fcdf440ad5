import { apiKeys, createService, MemoryStorage, ServiceError, type Authenticate, type Service } from '@resourcery/core';
import { call, RAW } from './handle-support';

/** The caller (DESIGN 13): the app's context and a pluggable authenticate. */

interface AppContext {
  user?: string;
}

function withAuth(authenticate: Authenticate<AppContext>): Service {
  const service = createService({ authenticate });
  service.addResource({ name: 'Note', storage: new MemoryStorage([{ Id: 1, Text: 'hi' }]) });
  return service;
}

async function get(service: Service, uri: string, context?: AppContext, headers: Record<string, string> = {}) {
  const res = await service.handle({ method: 'GET', uri, headers: { ...RAW, ...headers } }, { context });
  return res.status;
}

describe('authenticate sees the request and the context given to handle', () => {
  test('a principal from the context is accepted; a throw without one is 401', async () => {
    const seen: unknown[] = [];
    const service = withAuth((request, context) => {
      seen.push([request.method, request.uri, context]);
      if (!context?.user) throw new ServiceError('NotAuthorized', 'Log in first');
      return { name: context.user };
    });
    expect(await get(service, '/Note', { user: 'ann' })).toBe(200);
    expect(await get(service, '/Note')).toBe(401);
    expect(seen).toEqual([
      ['GET', '/Note', { user: 'ann' }],
      ['GET', '/Note', undefined],
    ]);
  });

  test('headers reach it lower-cased', async () => {
    const service = withAuth((request) => {
      if (request.headers.authorization !== 'Bearer good') throw new ServiceError('NotAuthorized', 'Bad token');
      return 'someone';
    });
    expect(await get(service, '/Note', undefined, { Authorization: 'Bearer good' })).toBe(200);
    expect(await get(service, '/Note', undefined, { Authorization: 'Bearer bad' })).toBe(401);
  });

  test('an asynchronous authenticator is awaited; its rejection with a plain Error is 401 with a generic message', async () => {
    const service = withAuth(async (request) => {
      await new Promise((r) => setImmediate(r));
      if (request.headers.authorization !== 'Bearer good') throw new Error('signature verification failed at offset 12');
      return 'someone';
    });
    expect(await get(service, '/Note', undefined, { authorization: 'Bearer good' })).toBe(200);
    const res = await call(service, 'GET', '/Note', { headers: { ...RAW, authorization: 'Bearer forged' } });
    expect(res.status).toBe(401);
    expect(res.json.ErrorCode).toBe('NotAuthorized');
    expect(res.text).not.toContain('offset 12');
  });

  test('a synchronous throw of a plain Error is 401 too', async () => {
    const service = withAuth(() => {
      throw new TypeError('x is undefined');
    });
    expect(await get(service, '/Note')).toBe(401);
  });
});

describe('API keys are one built-in authenticator', () => {
  test('apiKeys() composes with an app authenticator', async () => {
    const keys = apiKeys([{ key: 'robot-key', allow: [{ methods: ['GET'] }] }]);
    const service = withAuth((request, context) => (context?.user ? { user: context.user } : keys(request, context)));
    expect(await get(service, '/Note', { user: 'ann' })).toBe(200);
    expect(await get(service, '/Note', undefined, { authorization: 'apikey robot-key' })).toBe(200);
    expect(await get(service, '/Note', undefined, { authorization: 'apikey wrong' })).toBe(401);
    // The key's allow rules still apply to its holder.
    const del = await service.handle({ method: 'DELETE', uri: '/Note/Id=1', headers: { authorization: 'apikey robot-key' } });
    expect(del.status).toBe(403);
  });

  test('apiKeys and authenticate together are refused at construction', () => {
    expect(() => createService({ apiKeys: [{ key: 'k' }], authenticate: () => 'x' })).toThrow(/either apiKeys or authenticate/);
  });

  test('the raw keys are not kept on the service options', () => {
    const service = createService({ apiKeys: [{ key: 'very-secret-key' }] });
    expect(JSON.stringify(service.options)).not.toContain('very-secret-key');
    expect((service.options as Record<string, unknown>).apiKeys).toBeUndefined();
  });
});

describe("local requests on the caller's behalf carry the context", () => {
  test('a Source request is authenticated with the same context', async () => {
    const contexts: unknown[] = [];
    const service = withAuth((_request, context) => {
      contexts.push(context);
      if (!context?.user) throw new ServiceError('NotAuthorized', 'Log in first');
      return context.user;
    });
    service.addResource({ name: 'Copy' });
    const res = await service.handle({ method: 'POST', uri: '/Copy', headers: { source: 'GET /Note' } }, { context: { user: 'ann' } });
    expect(res.status).toBe(201);
    expect(contexts).toEqual([{ user: 'ann' }, { user: 'ann' }]);
  });
});
