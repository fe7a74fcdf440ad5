import { MemoryStorage, Service } from '@resourcery/core';
import { call, RAW } from './handle-support';

/** A service whose Doc resource holds `count` entities of about `size` characters each. */
function docs(count: number, size: number, options: ConstructorParameters<typeof Service>[0] = {}): Service {
  const service = new Service(options);
  const entities = Array.from({ length: count }, (_, i) => ({ Id: i, Text: 'ab'.repeat(size / 2) }));
  service.addResource({ name: 'Doc', storage: new MemoryStorage(entities) });
  service.addResource({ name: 'Small', storage: new MemoryStorage([{ Id: 1 }]) });
  return service;
}

const SLOW = `/Doc/_/search_regex=${encodeURIComponent('a.*a.*a.*a.*c')}`;

describe('search and search_regex: a per-request budget, and other requests keep being answered', () => {
  test('a search over more text than the budget is a 400 naming the budget', async () => {
    const service = docs(20, 100_000, { searchBudget: 1_000_000 });
    for (const uri of [SLOW, '/Doc/_/search=zzz']) {
      const reply = await call(service, 'GET', uri, { headers: RAW });
      expect([reply.status, reply.json.ErrorCode]).toEqual([400, 'InvalidMetaConditionValueType']);
      expect(reply.json.Message).toContain('1000000 characters');
      expect(reply.headers.errorinfo).toBeDefined();
    }
  });

  test('within the budget the search answers; a limit stops the scan once the page is full', async () => {
    const service = docs(20, 100_000, { searchBudget: 1_000_000 });
    expect((await call(service, 'GET', '/Doc/_/search=ab&limit=2&select=Id', { headers: RAW })).json).toEqual([{ Id: 0 }, { Id: 1 }]);
    expect((await call(service, 'GET', '/Doc/Id<5/search=zzz', { headers: RAW })).status).toBe(204);
  });

  test('the default budget lets a large search through', async () => {
    const reply = await call(docs(20, 100_000), 'GET', `${SLOW}&select=Id`, { headers: RAW });
    expect(reply.status).toBe(204);
  });

  test('a cheap request sent while a long search runs completes before it', async () => {
    const service = docs(40, 100_000);
    const done: string[] = [];
    const slow = call(service, 'GET', SLOW, { headers: RAW }).then((r) => done.push(`slow ${r.status}`));
    // Let the slow request reach its scan before the cheap one is sent.
    await new Promise((resolve) => setImmediate(resolve));
    const cheap = call(service, 'GET', '/Small', { headers: RAW }).then((r) => done.push(`cheap ${r.status}`));
    await Promise.all([slow, cheap]);
    expect(done).toEqual(['cheap 200', 'slow 204']);
  });
});

test('search_regex leaves the host VM flags alone (no experimental regexp engine switched on)', async () => {
  const reply = await call(docs(2, 100), 'GET', `/Doc/_/search_regex=${encodeURIComponent('^a.*b$')},Text&select=Id`, { headers: RAW });
  expect(reply.json).toEqual([{ Id: 0 }, { Id: 1 }]);
  // eslint-disable-next-line no-invalid-regexp -- the test asserts that V8's flag 'l' stays unknown
  expect(() => new RegExp('a', 'l')).toThrow(SyntaxError);
});
