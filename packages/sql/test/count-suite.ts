import { createService, MemoryStorage, type Service, type Storage } from '@resourcery/core';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call, comparable, PEOPLE } from './support';

/**
 * count=true in SQL (docs/uri.md#count): the total is one count(*) of the conditions, the
 * page its own LIMIT; no statement reads the whole table. Run on PGlite and PostgreSQL.
 */
export function countSuite(database: () => SqlClient, freshTable: () => string): void {
  describe('count=true: the total counted by the database', () => {
    const service = (storage: Storage): Service => {
      const s = createService();
      s.addResource({ name: 'Person', storage });
      return s;
    };

    test('TotalCount as MemoryStorage gives it; a count(*) and a LIMITed page, nothing else', async () => {
      const statements: string[] = [];
      const client: SqlClient = {
        query: (text, params) => {
          if (text.startsWith('SELECT ')) statements.push(text);
          return database().query(text, params);
        },
      };
      const storage = createSqlStorage({ client, table: freshTable() });
      await storage.write({ insert: structuredClone(PEOPLE) });
      const sql = service(storage);
      const memory = service(new MemoryStorage(structuredClone(PEOPLE)));
      for (const uri of [
        '/Person/_/limit=2&count=true',
        '/Person/Age>20/order_desc=Age&offset=1&limit=2&count=true',
        '/Person/Id=1|2|3/count=true',
      ]) {
        statements.length = 0;
        const [m, s] = [await call(memory, 'GET', uri), await call(sql, 'GET', uri)];
        expect({ uri, ...(comparable(s) as object) }).toEqual({ uri, ...(comparable(m) as object) });
        expect(m.headers['x-total-count']).toMatch(/^\d+$/);
        expect(s.headers['x-total-count']).toBe(m.headers['x-total-count']);
        expect(statements.filter((t) => /count\(\*\)/.test(t))).toHaveLength(1);
        expect(statements.filter((t) => !/count\(\*\)/.test(t)).every((t) => / LIMIT /.test(t))).toBe(true);
      }
    });

    test('a row rule (Owner=ann) counts the rows of the caller only, in TotalCount, X-Total-Count and the count(*)', async () => {
      const table = freshTable();
      const rows = Array.from({ length: 20 }, (_, i) => ({ Id: i + 1, Owner: ['ann', 'bo', 'cy', 'bo'][i % 4], Size: i }));
      await createSqlStorage({ client: database(), table }).write({ insert: rows });
      const counted: string[] = [];
      const client: SqlClient = {
        query: (text, params) => {
          if (/count\(\*\)/.test(text)) counted.push(`${text} ${JSON.stringify(params ?? [])}`);
          return database().query(text, params);
        },
      };
      const s = createService({ authenticate: (request) => request.headers['x-user'] ?? null });
      s.addResource({
        name: 'Task',
        storage: createSqlStorage({ client, table }),
        rules: { allow: () => true, rows: (caller) => `Owner='${String(caller.principal)}'` },
      });
      const own = (user: string, where = (_: (typeof rows)[number]) => true) =>
        String(rows.filter((r) => r.Owner === user && where(r)).length);
      const ann = await call(s, 'GET', '/Task/_/limit=2&count=true', undefined, { accept: 'application/json', 'x-user': 'ann' });
      expect(ann.json).toMatchObject({ DataCount: 2, TotalCount: Number(own('ann')) });
      expect(ann.headers['x-total-count']).toBe(own('ann'));
      const bo = await call(s, 'GET', '/Task/Size>5/limit=1&count=true', undefined, {
        accept: 'application/json;raw=true',
        'x-user': 'bo',
      });
      expect((bo.json as Array<{ Owner: string }>).map((r) => r.Owner)).toEqual(['bo']);
      expect(bo.headers['x-total-count']).toBe(own('bo', (r) => r.Size > 5));
      expect(own('ann')).toBe('5');
      expect(own('bo', (r) => r.Size > 5)).toBe('7');
      // The rule is in the database's count, not applied to rows read afterwards.
      expect(counted).toHaveLength(2);
      expect([/ann/.test(counted[0]!), /bo/.test(counted[1]!)]).toEqual([true, true]);
    });

    test('past maxRows the page streams and the envelope still ends with the total', async () => {
      const table = freshTable();
      const rows = Array.from({ length: 30 }, (_, i) => ({ Id: i + 1, Even: i % 2 === 0 }));
      await createSqlStorage({ client: database(), table }).write({ insert: rows });
      const s = service(createSqlStorage({ client: database(), table, maxRows: 7 }));
      const r = await call(s, 'GET', '/Person/Even=true/select=Id&count=true', undefined, { accept: 'application/json' });
      const envelope = r.json as Record<string, unknown>;
      expect(Object.keys(envelope)).toEqual(['Status', 'Data', 'DataCount', 'TotalCount', 'TimeElapsedMs']);
      expect(envelope).toMatchObject({ DataCount: 15, TotalCount: 15 });
      expect(r.headers['x-total-count']).toBe('15');
    });
  });
}
