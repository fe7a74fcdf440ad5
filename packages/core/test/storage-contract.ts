import { createService, ServiceError, type Entity, type Service, type Storage } from '@resourcery/core';
import { entityVersion, parseUri, targetOf } from '@resourcery/core/storage';
import { OPERATIONS } from '../src/operations/write';
import type { Result } from '../src/operations/results';
import { call, RAW } from './handle-support';

/** Runs one operation of a service the way its pipeline does, with If-Match's versions. */
export async function runOperation(service: Service, method: string, uri: string, body?: Entity, ifMatch?: string[]): Promise<Result> {
  const parsed = parseUri(uri);
  const resource = service.resources.resolve(parsed.resource);
  return OPERATIONS[method]({
    resource,
    query: resource.query(parsed),
    input: async () => (body === undefined ? [] : [structuredClone(body)]),
    write: async (batch) => {
      await resource.storage.write(batch);
      return { raise: async () => undefined };
    },
    authorize: () => undefined,
    caller: { context: undefined, principal: undefined, method },
    rows: null,
    ifMatch,
  });
}

/**
 * The storage contract v2 (docs/storage.md), through the service: every storage the
 * project ships or documents runs it (MemoryStorage, a storage without the optional
 * parts, the documented MapStorage example, the SQL storage on PGlite and PostgreSQL).
 * `open` makes an empty storage for a resource whose key is `Id`.
 */
export function storageContract(name: string, open: () => Storage | Promise<Storage>): void {
  describe(`storage contract v2: ${name}`, () => {
    let service: Service;
    let storage: Storage;
    const PEOPLE = [
      { Id: 1, Name: 'Ann', Age: 30 },
      { Id: 2, Name: 'Bo', Age: 25 },
      { Id: 3, Name: 'Cy', Age: 41 },
    ];

    beforeEach(async () => {
      storage = await open();
      service = createService();
      service.addResource({ name: 'Person', key: 'Id', storage });
      expect((await call(service, 'POST', '/Person', { body: PEOPLE })).status).toBe(201);
    });

    const run = (method: string, uri: string, body?: Entity, ifMatch?: string[]) => runOperation(service, method, uri, body, ifMatch);

    const people = async () => (await call(service, 'GET', '/Person/_/order_asc=Id', { headers: RAW })).json as Entity[];
    const versionOf = async (id: number) => {
      const result = await run('GET', `/Person/Id=${id}`);
      return (result as { version?: string }).version!;
    };
    const failure = async (promise: Promise<unknown>) => {
      const e = await promise.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(ServiceError.is(e)).toBe(true);
      return e as ServiceError;
    };

    test('a GET of one entity tells its version; a write changes it, and a projection keeps it', async () => {
      const before = await versionOf(2);
      expect(typeof before).toBe('string');
      expect(((await run('GET', '/Person/Id=2/select=Name')) as { version?: string }).version).toBe(before);
      expect(await versionOf(2)).toBe(before);
      const patched = await run('PATCH', '/Person/Id=2', { Age: 26 });
      const after = await versionOf(2);
      expect(after).not.toBe(before);
      expect((patched as { version?: string }).version).toBe(after);
      expect(await versionOf(1)).not.toBe(after);
    });

    test('If-Match: the write happens at the named version, and is 412 with nothing written at any other', async () => {
      const version = await versionOf(1);
      await run('PATCH', '/Person/Id=1', { Age: 31 }, [version]);
      const stale = await failure(run('PATCH', '/Person/Id=1', { Age: 99 }, [version]));
      expect([stale.code, stale.status]).toEqual(['PreconditionFailed', 412]);
      expect((await failure(run('DELETE', '/Person/Id=1', undefined, [version]))).status).toBe(412);
      expect((await people())[0]).toEqual({ Id: 1, Name: 'Ann', Age: 31 });
      await run('DELETE', '/Person/Id=1', undefined, [await versionOf(1)]);
      expect((await people()).map((p) => p.Id)).toEqual([2, 3]);
    });

    test('If-Match on a PUT or DELETE with nothing to change is 412; * matches any existing entity', async () => {
      expect((await failure(run('PUT', '/Person/Id=9', { Name: 'Nine' }, ['*']))).status).toBe(412);
      expect((await failure(run('DELETE', '/Person/Id=9', undefined, ['*']))).status).toBe(412);
      await run('PUT', '/Person/Id=3', { Name: 'Cyd' }, ['*']);
      expect((await people()).map((p) => p.Id)).toEqual([1, 2, 3]);
      expect((await people())[2].Name).toBe('Cyd');
    });

    test('two conditional updates of one version at once: exactly one wins, the other is 412', async () => {
      const version = await versionOf(2);
      const outcomes = await Promise.allSettled([
        run('PATCH', '/Person/Id=2', { Name: 'first' }, [version]),
        run('PATCH', '/Person/Id=2', { Name: 'second' }, [version]),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason.code).toBe('PreconditionFailed');
      expect(['first', 'second']).toContain((await people())[1].Name);
    });

    test('keys are unique: an insert or a PATCH to a taken key is 409 and writes nothing', async () => {
      const taken = await call(service, 'POST', '/Person', { body: [{ Id: 4 }, { Id: 2, Name: 'again' }] });
      expect([taken.status, taken.json.ErrorCode]).toEqual([409, 'Conflict']);
      const moved = await call(service, 'PATCH', '/Person/Id=3', { body: { Id: 1 } });
      expect([moved.status, moved.json.ErrorCode]).toEqual([409, 'Conflict']);
      const both = await call(service, 'PATCH', '/Person/Age>20/unsafe=true', { body: { Id: 8 } });
      expect(both.status).toBe(409);
      expect(await people()).toEqual(PEOPLE);
      expect((await call(service, 'PATCH', '/Person/Id=3', { body: { Id: 5 } })).status).toBe(200);
      expect((await people()).map((p) => p.Id)).toEqual([1, 2, 5]);
    });

    test('a write whose target changed after it was read is refused with Conflict, and the whole batch with it', async () => {
      const read = [
        ...((await storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 })).entities as Entity[]),
      ];
      const byId = (id: number) => read.find((e) => e.Id === id)!;
      const targets = new Map(read.map((e) => [e.Id, targetOf(storage, e, ['Id'])]));
      await storage.write({ update: [{ target: targets.get(2)!, value: { ...byId(2), Age: 26 } }] });
      const stale = storage.write({
        insert: [{ Id: 4 }],
        update: [{ target: targets.get(1)!, value: { ...byId(1), Age: 0 } }],
        delete: [targets.get(2)!],
      });
      expect((await failure(stale)).code).toBe('Conflict');
      expect(await people()).toEqual([PEOPLE[0], { ...PEOPLE[1], Age: 26 }, PEOPLE[2]]);
    });

    test('versions are the storage stamp when it issues them, else a digest of the content', async () => {
      const [ann] = (await storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1 })).entities as Entity[];
      const stamp = storage.stamp?.(ann);
      expect(entityVersion(storage, ann)).toBe(stamp ? `${stamp.row}.${stamp.version}` : entityVersion(storage, { ...ann }));
    });
  });
}
