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
