import { createService, type Service } from '@resourcery/core';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call } from './support';

/** A client that logs every statement it runs, on checked-out connections and in transactions too. */
export function logging(db: SqlClient, log: Array<[string, unknown[] | undefined]>): SqlClient {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        if (prop === 'query')
          // A prepared statement (client.ts) comes as pg's config object: { name, text, values }.
          return (text: string | { text: string; values?: unknown[] }, params?: unknown[]) => {
            log.push(typeof text === 'string' ? [text, params] : [text.text, text.values]);
            return (t as { query(a: unknown, b?: unknown[]): Promise<unknown> }).query(text, params);
          };
        if (!(prop in t)) return undefined;
        if (prop === 'connect') return async () => wrap(await (t as unknown as { connect(): Promise<object> }).connect());
        if (prop === 'transaction')
          return (fn: (tx: SqlClient) => Promise<unknown>) =>
            (t as unknown as { transaction(f: typeof fn): Promise<unknown> }).transaction((tx) => fn(wrap(tx)));
        const value = Reflect.get(t, prop) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
      },
    });
  return wrap(db as SqlClient & object);
}

const ROWS = 20_000;

/**
 * The key's paths (issue 25 item 5), run on PGlite and on real PostgreSQL by sqlSuite: a
 * resource with a key and no declared index finds entities by key, matches safepost's
 * values, reserves the next generated key and orders by the key through the key column's
 * unique index (rk_), never a sequential scan of its table, with the answers unchanged.
 */
export function keyPathsSuite(database: () => SqlClient, freshTable: () => string): void {
  describe('key paths through the key index (EXPLAIN)', () => {
    let table: string;
    let sql: Service;
    const log: Array<[string, unknown[] | undefined]> = [];

    /** The plans of the statements the last request sent that read the table; each must use the key index. */
    async function expectKeyIndex(run: () => Promise<unknown>): Promise<string[]> {
      log.length = 0;
      await run();
      const statements = log.filter(([text]) => /^(SELECT|WITH|INSERT)/.test(text) && text.includes(table));
      expect(statements.length).toBeGreaterThan(0);
      const plans: string[] = [];
      for (const [text, params] of statements) {
        const plan = (await database().query(`EXPLAIN ${text}`, params)).rows.map((r) => Object.values(r)[0]).join('\n');
        expect({ text, plan }).toEqual({ text, plan: expect.not.stringMatching(new RegExp(`Seq Scan on ${table}\\b`)) });
        plans.push(plan);
      }
      expect(plans.join('\n')).toMatch(/Index (Only )?Scan( Backward)? using rk_/);
      return plans;
    }

    beforeAll(async () => {
      table = freshTable();
      const setup = createService();
      const first = createSqlStorage({ client: database(), table });
      setup.addResource({ name: 'Person', storage: first, key: 'Id' });
      await first.ready();
      // Rows as the storage writes them (body and key column), many enough that only an index is cheap.
      await database().query(
        `INSERT INTO ${table} (body, key) SELECT json_build_object('Id', i, 'Name', 'P' || i)::text, jsonb_build_array(i) FROM generate_series(1, ${ROWS}) i`,
      );
      await database().query(`ANALYZE ${table}`);
      // A storage started on the filled table: it checks the key column once, through its index.
      sql = createService();
      sql.addResource({ name: 'Person', storage: createSqlStorage({ client: logging(database(), log), table }), key: 'Id' });
    });

    test('/R/<key>, /R/id=<key> and lists of keys', async () => {
      await expectKeyIndex(async () => expect((await call(sql, 'GET', '/Person/12345')).json).toEqual([{ Id: 12345, Name: 'P12345' }]));
      await expectKeyIndex(async () => expect((await call(sql, 'GET', '/Person/id=777')).json).toEqual([{ Id: 777, Name: 'P777' }]));
      await expectKeyIndex(async () =>
        expect((await call(sql, 'GET', '/Person/ID=5|6|9/select=Id')).json).toEqual([{ Id: 5 }, { Id: 6 }, { Id: 9 }]),
      );
      await expectKeyIndex(async () => expect((await call(sql, 'GET', '/Person/99999')).status).toBe(204));
    });

    test('order by the key, ascending and descending, with a page', async () => {
      await expectKeyIndex(async () =>
        expect((await call(sql, 'GET', '/Person/_/order_asc=Id&limit=3&select=Id')).json).toEqual([{ Id: 1 }, { Id: 2 }, { Id: 3 }]),
      );
      await expectKeyIndex(async () =>
        expect((await call(sql, 'GET', '/Person/_/order_desc=id&offset=1&limit=2&select=Id')).json).toEqual([
          { Id: ROWS - 1 },
          { Id: ROWS - 2 },
        ]),
      );
    });

    test("safepost's per-value matches", async () => {
      await expectKeyIndex(async () =>
        expect((await call(sql, 'POST', '/Person/_/safepost=Id', [{ Id: 42, Name: 'forty-two' }])).status).toBeLessThan(300),
      );
      expect((await call(sql, 'GET', '/Person/42')).json).toEqual([{ Id: 42, Name: 'forty-two' }]);
    });

    test('the next generated key', async () => {
      const plans = await expectKeyIndex(async () => expect((await call(sql, 'POST', '/Person', { Name: 'new' })).status).toBe(201));
      expect(plans.join('\n')).toMatch(/resourcery_keys/);
      expect((await call(sql, 'GET', `/Person/${ROWS + 1}`)).json).toEqual([{ Name: 'new', Id: ROWS + 1 }]);
    });

    test('a key order that is not all numbers, and rows written without the key column, are answered right (scanning)', async () => {
      const other = freshTable();
      const s = createService();
      const storage = createSqlStorage({ client: database(), table: other });
      s.addResource({ name: 'Person', storage, key: 'Id' });
      expect((await call(s, 'POST', '/Person', [{ Id: 2 }, { Id: 'b' }, { Id: 1 }, { Id: true }])).status).toBe(201);
      // Without a key (the service generates one; the storage takes any).
      await storage.write({ insert: [{ Name: 'none' }] });
      expect((await call(s, 'GET', '/Person/_/order_asc=Id&limit=9')).json).toEqual([
        { Name: 'none' },
        { Id: true },
        { Id: 1 },
        { Id: 2 },
        { Id: 'b' },
      ]);
      expect((await call(s, 'GET', '/Person/_/order_desc=Id&limit=2')).json).toEqual([{ Id: 'b' }, { Id: 2 }]);
      // Written behind the storage's back: a body with a key, no key column. A storage started after it finds it.
      await database().query(`INSERT INTO ${other} (body) VALUES ('{"id": 7}')`);
      const later = createService();
      later.addResource({ name: 'Person', storage: createSqlStorage({ client: database(), table: other }), key: 'Id' });
      expect((await call(later, 'GET', '/Person/7')).json).toEqual([{ id: 7 }]);
      expect((await call(later, 'GET', '/Person/Id=1|7')).json).toEqual([{ Id: 1 }, { id: 7 }]);
    });
  });
}
