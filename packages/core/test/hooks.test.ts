import { createService, MemoryStorage, ServiceError, type ErrorInfo, type Service } from '@resourcery/core';
import { call, RAW } from './handle-support';

/** Hooks with the caller, and onError (DESIGN 13). */

interface Ctx {
  user: string;
}

function notes(log: string[]): { service: Service; storage: MemoryStorage } {
  const service = createService({ authenticate: (_request, context: Ctx | undefined) => ({ name: context?.user ?? 'anonymous' }) });
  const storage = new MemoryStorage([{ Id: 1, Text: 'first', Author: 'ann' }]);
  const who = (c: { context: Ctx | undefined; principal: { name: string } }) => `${c.principal.name}/${c.context?.user}`;
  service.addResource({
    name: 'Note',
    storage,
    hooks: {
      beforeRead: (caller) => {
        log.push(`beforeRead ${who(caller)} ${caller.method}`);
      },
      afterRead: (entities, caller) => {
        log.push(`afterRead ${who(caller)} ${entities.length}`);
        return entities.map((e) => ({ ...e, Seen: true }));
      },
      beforeInsert: (entity, caller) => {
        log.push(`beforeInsert ${who(caller)}`);
        if (entity.Text === '') throw new ServiceError('InvalidResourceEntity', 'A note needs text');
        return { ...entity, Author: caller.principal.name };
      },
      afterInsert: (entities, caller) => {
        log.push(`afterInsert ${who(caller)} ${entities.map((e) => e.Author).join()}`);
      },
      beforeUpdate: (entity, existing, caller) => {
        log.push(`beforeUpdate ${who(caller)} ${existing.Text}->${entity.Text}`);
        return { ...entity, EditedBy: caller.principal.name };
      },
      afterUpdate: (entities, caller) => {
        log.push(`afterUpdate ${who(caller)} ${entities.map((e) => e.EditedBy).join()}`);
      },
      beforeDelete: (entities, caller) => {
        log.push(`beforeDelete ${who(caller)} ${entities.length}`);
        if (entities.some((e) => e.Author !== caller.principal.name)) throw new ServiceError('Forbidden', 'Only the author deletes a note');
      },
      afterDelete: (entities, caller) => {
        log.push(`afterDelete ${who(caller)} ${entities.map((e) => e.Id).join()}`);
      },
    },
  });
  return { service, storage };
}

async function as(service: Service, user: string, method: string, uri: string, body?: unknown) {
  const payload = body === undefined ? null : JSON.stringify(body);
  const res = await service.handle(
    { method, uri, headers: { ...RAW, 'content-type': 'application/json' }, body: payload },
    { context: { user } },
  );
  return res;
}

test('read hooks see the caller; afterRead may change what is answered', async () => {
  const log: string[] = [];
  const { service } = notes(log);
  const res = await call(service, 'GET', '/Note', { headers: RAW });
  expect(res.json).toEqual([{ Id: 1, Text: 'first', Author: 'ann', Seen: true }]);
  await as(service, 'ann', 'REPORT', '/Note');
  expect(log).toEqual(['beforeRead anonymous/undefined GET', 'afterRead anonymous/undefined 1', 'beforeRead ann/ann REPORT']);
});

test('write hooks see the caller, may replace the entity, and refuse by throwing', async () => {
  const log: string[] = [];
  const { service, storage } = notes(log);
  expect((await as(service, 'bob', 'POST', '/Note', { Id: 2, Text: 'second', Author: 'forged' })).status).toBe(201);
  expect((await as(service, 'bob', 'POST', '/Note', { Id: 3, Text: '' })).status).toBe(400);
  expect((await as(service, 'bob', 'PATCH', '/Note/Id=1', { Text: 'edited' })).status).toBe(200);
  expect((await as(service, 'bob', 'DELETE', '/Note/Id=1')).status).toBe(403);
  expect((await as(service, 'bob', 'DELETE', '/Note/Id=2')).status).toBe(200);
  expect(storage.all()).toEqual([{ Id: 1, Text: 'edited', Author: 'ann', EditedBy: 'bob' }]);
  expect(log).toEqual([
    'beforeInsert bob/bob',
    'afterInsert bob/bob bob',
    'beforeInsert bob/bob',
    'beforeUpdate bob/bob first->edited',
    'afterUpdate bob/bob bob',
    'beforeDelete bob/bob 1',
    'beforeDelete bob/bob 1',
    'afterDelete bob/bob 2',
  ]);
});

describe('onError', () => {
  test('receives an unexpected error with its cause and the caller; a client mistake does not reach it', async () => {
    const seen: Array<[ServiceError, ErrorInfo]> = [];
    const service = createService({
      onError: (error, info) => {
        seen.push([error, info]);
      },
    });
    service.addResource({
      name: 'Flaky',
      hooks: {
        beforeRead: () => {
          throw new RangeError('db pool exhausted');
        },
      },
    });
    const res = await service.handle({ method: 'GET', uri: '/Flaky', headers: RAW }, { context: { requestId: 'r-1' } });
    expect(res.status).toBe(500);
    expect(res.headers.errorinfo).toMatch(/Service\.Admin\.Error/);
    await call(service, 'GET', '/Nowhere');
    expect(seen).toHaveLength(1);
    const [error, info] = seen[0];
    expect(error.status).toBe(500);
    expect(info.cause).toBeInstanceOf(RangeError);
    expect((info.cause as Error).message).toBe('db pool exhausted');
    expect(info).toMatchObject({ method: 'GET', uri: '/Flaky', caller: { context: { requestId: 'r-1' } } });
  });

  test('a throwing onError does not change the answer', async () => {
    const service = createService({
      onError: () => {
        throw new Error('logger down');
      },
    });
    service.addResource({
      name: 'Flaky',
      hooks: {
        beforeRead: () => {
          throw new Error('boom');
        },
      },
    });
    expect((await call(service, 'GET', '/Flaky')).status).toBe(500);
  });
});
