import { createService, type Entity, type Service } from '@resourcery/core';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { runOperation } from '../../core/test/storage-contract';
import { call } from './support';

/**
 * Two Service instances on one database (issue 12 items 2-3), run on PGlite and on real
 * PostgreSQL by sqlSuite: a resource with a key stays one entity per key, whatever the
 * instances do at the same moment, and conditional writes let exactly one of them win.
 */
export function twoInstanceSuite(database: () => SqlClient, table: () => string): void {
  function instances(): [Service, Service] {
    const name = table();
    const service = () => {
      const s = createService();
      s.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: database(), table: name }) });
      return s;
    };
    return [service(), service()];
  }

  const count = async (s: Service) => (await call(s, 'REPORT', '/Person')).json as number;

  describe('two instances on one database: one entity per key, atomically', () => {
    test('instances creating one table and its key column at once all answer their first request (no 500)', async () => {
      // The losing creator of a table failed now and then on PostgreSQL (42710 "type already
      // exists", about one table in 50): many tables, four instances each, to meet that race.
      for (let t = 0; t < 40; t++) {
        const name = table();
        const replies = await Promise.all(
          Array.from({ length: 4 }, (_, i) => {
            const s = createService();
            s.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: database(), table: name }) });
            return call(s, 'PUT', `/Person/Id=${i}`, { Name: `${i}` });
          }),
        );
        expect(replies.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      }
    });

    test('a PUT of one key on both instances at once stores one entity; both answer 2xx', async () => {
      const [a, b] = instances();
      for (let round = 1; round <= 5; round++) {
        const replies = await Promise.all([
          call(a, 'PUT', `/Person/Id=${round}`, { Name: `a${round}` }),
          call(b, 'PUT', `/Person/Id=${round}`, { Name: `b${round}` }),
        ]);
        expect(replies.map((r) => r.status).sort()).toEqual([200, 201]);
      }
      expect(await count(a)).toBe(5);
      const stored = (await call(b, 'GET', '/Person/_/order_asc=Id')).json as Entity[];
      expect(stored.map((p) => p.Id)).toEqual([1, 2, 3, 4, 5]);
    });

    test('safepost of the same 100 keys from both instances stores exactly 100 rows', async () => {
      const [a, b] = instances();
      const body = (by: string) => Array.from({ length: 100 }, (_, i) => ({ Id: i + 1, By: by }));
      const replies = await Promise.all([
        call(a, 'POST', '/Person/_/safepost=Id', body('a')),
        call(b, 'POST', '/Person/_/safepost=Id', body('b')),
      ]);
      expect(replies.map((r) => r.status)).toEqual([expect.any(Number), expect.any(Number)]);
      for (const r of replies) expect(r.status).toBeLessThan(300);
      expect(await count(a)).toBe(100);
      expect(await count(b)).toBe(100);
      const bys = (await call(a, 'GET', '/Person/_/distinct=true&select=By')).json as Entity[];
      // All of one instance's body won (each safepost is one all-or-nothing write).
      expect(bys).toHaveLength(1);
    });

    test('POSTs of one key on both instances: one is stored, the other is 409, never a 500', async () => {
      const [a, b] = instances();
      const replies = await Promise.all([call(a, 'POST', '/Person', { Id: 7, By: 'a' }), call(b, 'POST', '/Person', { Id: 7, By: 'b' })]);
      expect(replies.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(await count(a)).toBe(1);
    });

    test('a PATCH that gives an entity a key another instance just stored is 409', async () => {
      const [a, b] = instances();
      await call(a, 'POST', '/Person', [{ Id: 1 }, { Id: 2 }]);
      const moved = await call(b, 'PATCH', '/Person/Id=2', { Id: 1 });
      expect([moved.status, (moved.json as { ErrorCode: string }).ErrorCode]).toEqual([409, 'Conflict']);
      expect(((await call(a, 'GET', '/Person/_/order_asc=Id')).json as Entity[]).map((p) => p.Id)).toEqual([1, 2]);
    });

    test('a table made before keys gets its key column, filled from the bodies (the key spelled in any case)', async () => {
      const name = table();
      await database().query(
        `CREATE TABLE ${name} (id bigserial PRIMARY KEY, version bigint NOT NULL DEFAULT 0, body text NOT NULL, doc jsonb GENERATED ALWAYS AS (body::jsonb) STORED)`,
      );
      await database().query(`INSERT INTO ${name} (body) VALUES ('{"Id":1,"Name":"a"}'), ('{"id":2,"Name":"b"}'), ('{"Name":"no key"}')`);
      const s = createService();
      s.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: database(), table: name }) });
      expect((await call(s, 'POST', '/Person', { Id: 2 })).status).toBe(409);
      expect((await call(s, 'POST', '/Person', { Id: 3 })).status).toBe(201);
      expect(await count(s)).toBe(4);
    });

    test('4 instances x 200 concurrent POSTs without a key: 800 rows, 800 distinct keys, every answer 201', async () => {
      const name = table();
      const services = Array.from({ length: 4 }, () => {
        const s = createService();
        s.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: database(), table: name }) });
        return s;
      });
      const replies = await Promise.all(
        services.flatMap((s, i) => Array.from({ length: 200 }, (_, n) => call(s, 'POST', '/Person', { By: `${i}.${n}` }))),
      );
      expect(replies.filter((r) => r.status !== 201).map((r) => r.json)).toEqual([]);
      const stored = (await call(services[0], 'GET', '/Person/_/order_asc=Id&select=Id')).json as Entity[];
      expect(stored).toHaveLength(800);
      expect(new Set(stored.map((p) => p.Id)).size).toBe(800);
      // Still the next whole number after the largest: 1 to 800, and then past a larger key written by hand.
      expect(stored.map((p) => p.Id)).toEqual(Array.from({ length: 800 }, (_, i) => i + 1));
      expect((await call(services[1], 'PUT', '/Person/Id=5000', { By: 'hand' })).status).toBe(201);
      expect(((await call(services[2], 'POST', '/Person', { By: 'after' })).json as Entity[])[0].Id).toBe(5001);
    });

    test('conditional updates of one version on both instances at once: exactly one wins, the other is 412', async () => {
      const [a, b] = instances();
      await call(a, 'POST', '/Person', { Id: 1, Name: 'start' });
      for (let round = 0; round < 5; round++) {
        const { version } = (await runOperation(a, 'GET', '/Person/Id=1')) as { version?: string };
        expect((await runOperation(b, 'GET', '/Person/Id=1')) as { version?: string }).toMatchObject({ version });
        const outcomes = await Promise.allSettled([
          runOperation(a, 'PATCH', '/Person/Id=1', { Name: `a${round}` }, [version!]),
          runOperation(b, 'PATCH', '/Person/Id=1', { Name: `b${round}` }, [version!]),
        ]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        expect((outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason.code).toBe('PreconditionFailed');
      }
      expect(await count(b)).toBe(1);
    });
  });
}
