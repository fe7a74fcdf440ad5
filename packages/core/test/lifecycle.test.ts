import { createService, MemoryStorage, ServiceError, type Entity, type ResourceHooks } from '@resourcery/core';
import { call, RAW } from './handle-support';

// The one hook order of docs/lifecycle.md, observed: every hook and the schema log their
// step; events are seen by a listener.
function recorded() {
  const log: string[] = [];
  // One recorder fits every hook's signature: it logs, and beforeWrite gives back its entity.
  const step =
    (name: string): any =>
    (...args: unknown[]) => {
      log.push(name);
      return name === 'beforeWrite' ? args[0] : undefined;
    };
  const hooks: ResourceHooks = {
    beforeRead: step('beforeRead'),
    afterRead: step('afterRead'),
    beforeInsert: step('beforeInsert'),
    beforeUpdate: step('beforeUpdate'),
    beforeWrite: step('beforeWrite'),
    beforeDelete: step('beforeDelete'),
    afterWrite: step('afterWrite'),
    afterInsert: step('afterInsert'),
    afterUpdate: step('afterUpdate'),
    afterDelete: step('afterDelete'),
  };
  const schema = {
    '~standard': {
      version: 1 as const,
      vendor: 'test',
      validate: (value: unknown) => {
        log.push('schema');
        return { value: value as Entity };
      },
    },
  };
  const service = createService();
  service.addResource({ name: 'Note', key: 'Id', schema, hooks, storage: new MemoryStorage() });
  service.subscribe((event) => {
    log.push(`event ${event.name}`);
  });
  return { service, log };
}

test.each([
  ['POST', '/Note', { Id: 3, Text: 'a' }, ['beforeInsert', 'beforeWrite', 'schema', 'afterWrite', 'afterInsert', 'event Note.Inserted']],
  ['PATCH', '/Note/1', { Text: 'b' }, ['beforeUpdate', 'beforeWrite', 'schema', 'afterWrite', 'afterUpdate', 'event Note.Updated']],
  [
    'PUT',
    '/Note/Id=2',
    { Id: 2, Text: 'c' },
    ['beforeInsert', 'beforeWrite', 'schema', 'afterWrite', 'afterInsert', 'event Note.Inserted'],
  ],
  ['DELETE', '/Note/1', undefined, ['beforeDelete', 'afterWrite', 'afterDelete', 'event Note.Deleted']],
  ['GET', '/Note/1', undefined, ['beforeRead', 'afterRead']],
])('%s %s runs the hooks in the documented order', async (method, uri, body, expected) => {
  const { service, log } = recorded();
  expect((await call(service, 'POST', '/Note', { body: { Id: 1, Text: 'first' }, headers: RAW })).status).toBe(201);
  log.length = 0;
  const answer = await call(service, method, uri, body === undefined ? {} : { body });
  expect(answer.status).toBeLessThan(300);
  expect(log).toEqual(expected);
});

test('a refusal in beforeWrite stops the write before the schema, the storage and every after hook', async () => {
  const { service, log } = recorded();
  service.addResource({
    name: 'Locked',
    hooks: {
      beforeWrite: () => {
        log.push('refuse');
        throw new ServiceError('Forbidden', 'locked');
      },
      afterWrite: () => void log.push('afterWrite'),
    },
  });
  expect((await call(service, 'POST', '/Locked', { body: { A: 1 } })).status).toBe(403);
  expect(log).toEqual(['refuse']);
  expect((await call(service, 'GET', '/Locked')).status).toBe(204);
});

test('beforeWrite and afterWrite beside hooks (their first place) still run; given in both places is refused', async () => {
  const service = createService();
  const seen: string[] = [];
  service.addResource({
    name: 'Old',
    beforeWrite: (entity) => ({ ...entity, Stamped: true }),
    afterWrite: () => void seen.push('afterWrite'),
  });
  expect((await call(service, 'POST', '/Old', { body: { A: 1 }, headers: RAW })).json).toEqual([{ A: 1, Stamped: true }]);
  expect(seen).toEqual(['afterWrite']);
  expect(() => service.addResource({ name: 'Both', afterWrite: () => undefined, hooks: { afterWrite: () => undefined } })).toThrow(
    /give afterWrite once, in hooks/,
  );
});
