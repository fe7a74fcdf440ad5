import fc from 'fast-check';
import { createService, MemoryStorage, type JsonSchema, type Service, type Storage } from '@resourcery/core';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call, comparable, condition, LOCATORS, OPERATORS, PEOPLE, recording, VALUES, type Applied } from './support';

const SCHEMA: JsonSchema = {
  type: 'object',
  properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: 'number' } },
};

/**
 * Conditions with alternatives (`|`, docs/uri.md) in SQL, run on PGlite and on real
 * PostgreSQL by sqlSuite: the same answers as MemoryStorage, pushed down, and an IN list
 * on an indexed property answered through its index.
 */
export function orSuite(database: () => SqlClient, freshTable: () => string): void {
  const service = (storage: Storage, definition: { indexes?: string[]; schema?: JsonSchema } = {}): Service => {
    const s = createService();
    s.addResource({ name: 'Person', storage, ...definition });
    return s;
  };

  async function expectSame(memory: Service, sql: Service, uri: string): Promise<void> {
    const [m, s] = [await call(memory, 'GET', uri), await call(sql, 'GET', uri)];
    expect({ uri, ...(comparable(s) as object) }).toEqual({ uri, ...(comparable(m) as object) });
  }

  const alternative = fc.oneof(
    fc
      .tuple(fc.constantFrom(...LOCATORS), fc.constantFrom(...OPERATORS), fc.constantFrom(...VALUES))
      .map(([l, o, v]) => condition(l, o, v)),
    // No locator and operator: the previous alternative's.
    fc.constantFrom(...VALUES).map((v) => encodeURIComponent(v)),
  );
  const first = fc
    .tuple(fc.constantFrom(...LOCATORS), fc.constantFrom(...OPERATORS), fc.constantFrom(...VALUES))
    .map(([l, o, v]) => condition(l, o, v));
  const item = fc.tuple(first, fc.array(alternative, { minLength: 1, maxLength: 3 })).map(([a, rest]) => [a, ...rest].join('|'));
  const plain = first;
  const page = fc.constantFrom('', '/order_asc=Id&limit=3', '/order_desc=Name&offset=1&limit=4', '/limit=2');

  describe('conditions with alternatives (OR, IN lists)', () => {
    test('random OR items, with plain conditions and pages: SQL answers as MemoryStorage, mostly by itself', async () => {
      const log: Applied[] = [];
      const memory = service(new MemoryStorage(structuredClone(PEOPLE)));
      const storage = createSqlStorage({ client: database(), table: freshTable() });
      await storage.write({ insert: structuredClone(PEOPLE) });
      const sql = service(recording(storage, log));
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(item, plain), { minLength: 1, maxLength: 3 }), page, async (items, meta) => {
          await expectSame(memory, sql, `/Person/${items.join('&')}${meta}`);
        }),
        { numRuns: 300 },
      );
      expect(log.filter((a) => a.conditions).length).toBeGreaterThan(log.length * 0.7);
    });

    test('IN lists on typed indexed properties: as MemoryStorage, on generated entities', async () => {
      const person = fc.record(
        {
          Id: fc.integer({ min: 1, max: 30 }),
          Name: fc.constantFrom('Ann', 'ann', 'Bo', '', '30', 'x|y'),
          Age: fc.oneof(fc.integer({ min: -2, max: 40 }), fc.constantFrom(1.5, 30.0)),
        },
        { requiredKeys: ['Id'] },
      );
      const values = fc.constantFrom('Ann', "'ann'", 'Bo', "''", '30', '1.5', '-2', 'x%7Cy', 'null');
      const list = fc
        .tuple(fc.constantFrom('Name', 'Age', 'Id', 'name'), fc.array(values, { minLength: 2, maxLength: 4 }))
        .map(([l, vs]) => `${l}=${vs.join('|')}`);
      await fc.assert(
        fc.asyncProperty(fc.array(person, { maxLength: 8 }), list, async (people, where) => {
          const definition = { indexes: ['Id', 'Name', 'Age'], schema: SCHEMA };
          const sql = service(createSqlStorage({ client: database(), table: freshTable() }), definition);
          const memory = service(new MemoryStorage(), definition);
          for (const s of [sql, memory]) expect((await call(s, 'POST', '/Person', people)).status).toBeLessThan(300);
          await expectSame(memory, sql, `/Person/${where}`);
          await expectSame(memory, sql, `/Person/${where}/order_desc=Age&limit=3`);
        }),
        { numRuns: 40 },
      );
    }, 60_000);

    test('an IN list on an indexed property is one = ANY the index answers, not a sequential scan', async () => {
      const table = freshTable();
      let last: [string, unknown[] | undefined] = ['', undefined];
      const client: SqlClient = {
        query: (text, params) => {
          if (text.startsWith('SELECT ')) last = [text, params];
          return database().query(text, params);
        },
      };
      const storage = createSqlStorage({ client, table });
      const sql = service(storage, { indexes: ['Id', 'Name'], schema: SCHEMA });
      await storage.ready();
      await database().query(
        `INSERT INTO ${table} (body) SELECT json_build_object('Id', i, 'Name', 'N' || i)::text FROM generate_series(1, 20000) i`,
      );
      await database().query(`ANALYZE ${table}`);
      const log: Applied[] = [];
      const reply = await call(
        service(recording(storage, log), { indexes: ['Id', 'Name'], schema: SCHEMA }),
        'GET',
        '/Person/Id=7|19000|4/select=Id',
      );
      expect(reply.json).toEqual([{ Id: 4 }, { Id: 7 }, { Id: 19000 }]);
      expect(log).toEqual([{ conditions: true, paging: true }]);
      expect((await call(sql, 'GET', '/Person/Name=N5|N12000/select=Id')).json).toEqual([{ Id: 5 }, { Id: 12000 }]);
      expect(last[0]).toMatch(/= ANY\(/);
      const plan = (await database().query(`EXPLAIN ${last[0]}`, last[1])).rows.map((r) => Object.values(r)[0]).join('\n');
      expect(plan).not.toMatch(/Seq Scan/);
      expect(plan).toMatch(/Index|Bitmap/);
    });
  });
}
