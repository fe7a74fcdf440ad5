import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { createService, MemoryStorage, type Entity, type JsonSchema, type Service, type Storage } from '@resourcery/core';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call, comparable, condition, OPERATORS, PEOPLE, recording, VALUES, type Applied } from './support';

const INDEXES = ['Name', 'Age', 'Zip', 'Active', 'Born', 'Score', ['Age', 'Score']];
const SCHEMA: JsonSchema = {
  type: 'object',
  properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: 'number' }, Active: { type: 'boolean' } },
};

/** PEOPLE with the indexed properties spelled as declared (the misspelled ones renamed). */
const CLEAN: Entity[] = PEOPLE.map((e) => {
  const out: Entity = {};
  for (const [k, v] of Object.entries(e)) {
    const declared = ['Name', 'Age', 'Zip', 'Active', 'Born', 'Score'].find((n) => n.toLowerCase() === k.toLowerCase());
    out[declared ?? k] = v;
  }
  return out;
});

/** A client that remembers the last SELECT it ran, to EXPLAIN it. */
function explaining(db: SqlClient) {
  let last: [string, unknown[] | undefined] = ['', undefined];
  const client: SqlClient = {
    query: (text, params) => {
      if (text.startsWith('SELECT ')) last = [text, params];
      return db.query(text, params);
    },
  };
  const plan = async () => (await db.query(`EXPLAIN ${last[0]}`, last[1])).rows.map((r) => Object.values(r)[0]).join('\n');
  return { client, plan };
}

/**
 * Declared indexes (issue 12 item 5), run on PGlite and on real PostgreSQL by sqlSuite:
 * queries on indexed properties read what the index holds and stay exact.
 */
export function indexSuite(database: () => SqlClient, freshTable: () => string): void {
  const service = (storage: Storage, definition: { indexes?: typeof INDEXES; schema?: JsonSchema; key?: string } = {}): Service => {
    const s = createService();
    s.addResource({ name: 'Person', storage, ...definition });
    return s;
  };

  async function expectSame(memory: Service, sql: Service, uri: string): Promise<void> {
    const [m, s] = [await call(memory, 'GET', uri), await call(sql, 'GET', uri)];
    expect({ uri, ...(comparable(s) as object) }).toEqual({ uri, ...(comparable(m) as object) });
  }

  describe('declared indexes: exact answers through the index expressions', () => {
    test('untyped indexed properties: every operator and value as MemoryStorage answers', async () => {
      const table = freshTable();
      const sql = service(createSqlStorage({ client: database(), table }), { indexes: INDEXES });
      expect((await call(sql, 'POST', '/Person', CLEAN)).status).toBe(201);
      const memory = service(new MemoryStorage(structuredClone(CLEAN)));
      for (const locator of ['name', 'AGE', 'Zip', 'Born']) {
        for (const op of OPERATORS) {
          for (const value of VALUES) await expectSame(memory, sql, `/Person/${condition(locator, op, value)}/order_asc=Id`);
        }
      }
      for (const locator of ['Name', 'Age', 'Active', 'Score', 'Born']) {
        await expectSame(memory, sql, `/Person/_/order_desc=${locator}&limit=5`);
        await expectSame(memory, sql, `/Person/Age!=null/order_asc=${locator}&offset=1&limit=3`);
      }
    });

    test('typed indexed properties (JSON Schema): generated entities and queries as MemoryStorage answers', async () => {
      const person = fc.record(
        {
          Id: fc.integer({ min: 1, max: 50 }),
          Name: fc.constantFrom('Ann', 'ann', 'Bo', '', 'Zed\uffff', '😀', '30', 'true'),
          Age: fc.oneof(fc.integer({ min: -3, max: 40 }), fc.constantFrom(1.5, 30.0, 1e21, -0)),
          Active: fc.boolean(),
        },
        { requiredKeys: ['Id'] },
      );
      const value = fc.constantFrom('Ann', "'Ann'", 'ann', '30', '30.0', '1.5', '-0', '1e21', 'true', 'false', "''", 'null', 'Z', '1e999');
      const query = fc.tuple(
        fc.array(fc.tuple(fc.constantFrom('Name', 'age', 'Age', 'ACTIVE', 'Id'), fc.constantFrom(...OPERATORS), value), { maxLength: 2 }),
        fc.constantFrom('Name', 'Age', 'Active', 'Id'),
        fc.boolean(),
        fc.integer({ min: 0, max: 4 }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(person, { maxLength: 8 }), query, async (people, [conditions, by, desc, limit]) => {
          const definition = { indexes: INDEXES, schema: SCHEMA };
          const sql = service(createSqlStorage({ client: database(), table: freshTable() }), definition);
          const memory = service(new MemoryStorage(), definition);
          for (const s of [sql, memory]) expect((await call(s, 'POST', '/Person', people)).status).toBeLessThan(300);
          const where = conditions.length ? conditions.map(([l, o, v]) => condition(l, o, v)).join('&') : '_';
          await expectSame(memory, sql, `/Person/${where}/${desc ? 'order_desc' : 'order_asc'}=${by}&limit=${limit}`);
          await expectSame(memory, sql, `/Person/${where}`);
        }),
        { numRuns: 60 },
      );
    });

    test('rows that spell an indexed property otherwise (written before the index) switch its direct reads off', async () => {
      const table = freshTable();
      // Written without the index: `name`, `AGE`, `NAME` rows among them.
      await createSqlStorage({ client: database(), table }).write({ insert: structuredClone(PEOPLE) });
      const sql = service(createSqlStorage({ client: database(), table }), { indexes: INDEXES });
      const memory = service(new MemoryStorage(structuredClone(PEOPLE)));
      for (const uri of ['/Person/name=bo', '/Person/Age=25', '/Person/age>=30/order_desc=AGE', '/Person/NAME=Cy', '/Person/Zip=2139']) {
        await expectSame(memory, sql, uri);
      }
    });

    test('a write that spells an indexed property otherwise is a 400 naming the spelling', async () => {
      const sql = service(createSqlStorage({ client: database(), table: freshTable() }), { indexes: INDEXES });
      const reply = await call(sql, 'POST', '/Person', [{ Name: 'Ann' }, { name: 'bo' }]);
      expect(comparable(reply)).toEqual({ status: 400, code: 'InvalidResourceEntity' });
      expect(JSON.stringify(reply.json)).toContain("as 'Name'");
      expect((await call(sql, 'GET', '/Person')).status).toBe(204);
    });
  });

  describe('PostgreSQL answers through the indexes (EXPLAIN)', () => {
    test('key lookup and filter + order + limit use an index, never a sequential scan', async () => {
      const table = freshTable();
      const { client, plan } = explaining(database());
      const storage = createSqlStorage({ client, table });
      const sql = service(storage, {
        indexes: ['Id', ['Age', 'Score'], 'City'],
        schema: {
          type: 'object',
          properties: { Id: { type: 'integer' }, Age: { type: 'integer' }, Score: { type: 'integer' }, City: { type: 'string' } },
        },
      });
      await storage.ready();
      await database().query(
        `INSERT INTO ${table} (body) SELECT json_build_object('Id', i, 'Age', i % 4, 'City', 'City ' || (i % 50), 'Score', (i * 7919) % 10000)::text FROM generate_series(1, 20000) i`,
      );
      await database().query(`ANALYZE ${table}`);
      const expectIndexed = (text: string) => {
        expect(text).not.toMatch(/Seq Scan/);
        expect(text).toMatch(/Index (Only )?Scan/);
      };

      expect((await call(sql, 'GET', '/Person/Id=12345')).json).toEqual([
        { Id: 12345, Age: 1, City: 'City 45', Score: (12345 * 7919) % 10000 },
      ]);
      expectIndexed(await plan());

      // Each Score is held by two rows of one Age (i and i + 10,000): ties, in id order.
      const people = Array.from({ length: 20000 }, (_, k) => ({ Id: k + 1, Age: (k + 1) % 4, Score: ((k + 1) * 7919) % 10000 }));
      const top = people
        .filter((p) => p.Age === 2)
        .sort((a, b) => b.Score - a.Score || a.Id - b.Id)
        .slice(0, 10)
        .map(({ Id, Score }) => ({ Id, Score }));
      expect(top[0].Score).toBe(top[1].Score);
      expect((await call(sql, 'GET', '/Person/Age=2/order_desc=Score&limit=10&select=Id,Score')).json).toEqual(top);
      expectIndexed(await plan());
      // Thousands of matches: the order and its ties' order come from the index (it ends
      // with id DESC, read backwards): no sort at all, not even of each run of ties.
      expect(await plan()).toMatch(/Index Scan Backward using rx_/);
      expect(await plan()).not.toMatch(/Sort/);
      // The key lookup's ORDER BY id: read in order too.
      await call(sql, 'GET', '/Person/Id=777');
      expect(await plan()).not.toMatch(/Sort/);

      expect((await call(sql, 'GET', "/Person/City='City 7'&Age=3/order_asc=Id&limit=1&select=Id")).json).toEqual([{ Id: 7 }]);
      expectIndexed(await plan());
    });
  });

  describe('a table whose indexes an earlier version built (without the row id)', () => {
    test('the index ending with id is built beside the old one, which is left in place; answers unchanged', async () => {
      const table = freshTable();
      await createSqlStorage({ client: database(), table }).ready();
      await database().query(
        `INSERT INTO ${table} (body) SELECT json_build_object('Id', i, 'Age', i % 4, 'Score', i % 7)::text FROM generate_series(1, 400) i`,
      );
      // What an earlier version ran for ['Age', 'Score'] (its name hashes its expressions).
      const old = ["(doc -> 'Age') NULLS FIRST", "(doc -> 'Score') NULLS FIRST"];
      const oldName = `rx_${createHash('sha256')
        .update(JSON.stringify([table, old, false]))
        .digest('hex')
        .slice(0, 20)}`;
      await database().query(`CREATE INDEX ${oldName} ON ${table} (${old.join(', ')})`);
      const definition = {
        indexes: [['Age', 'Score']],
        schema: { type: 'object', properties: { Age: { type: 'integer' }, Score: { type: 'integer' } } } as JsonSchema,
      };
      const storage = createSqlStorage({ client: database(), table });
      const sql = service(storage, definition);
      await storage.ready();
      const { rows } = await database().query(`SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 AND indexname LIKE 'rx_%'`, [
        table.split('.').pop(),
      ]);
      const defs = (rows as Array<{ indexname: string; indexdef: string }>).map((r) => r.indexdef.replace(/^.* USING btree /, ''));
      expect(defs.sort()).toEqual([
        "(((doc -> 'Age'::text)) NULLS FIRST, ((doc -> 'Score'::text)) NULLS FIRST)",
        "(((doc -> 'Age'::text)) NULLS FIRST, ((doc -> 'Score'::text)) NULLS FIRST, id DESC)",
      ]);
      expect(rows.map((r) => (r as { indexname: string }).indexname)).toContain(oldName);
      const people = Array.from({ length: 400 }, (_, k) => ({ Id: k + 1, Age: (k + 1) % 4, Score: (k + 1) % 7 }));
      const memory = service(new MemoryStorage(people), definition);
      for (const uri of [
        '/Person/Age=1/order_desc=Score&limit=7',
        '/Person/Age=1/order_asc=Score&limit=7',
        '/Person/_/order_desc=Age,Score&limit=9',
      ]) {
        await expectSame(memory, sql, uri);
      }
    });
  });

  describe('several order keys through a declared composite index (EXPLAIN)', () => {
    test('ORDER BY a, b (and a, b DESC) reads the (a, b) index in order: no sort of every row', async () => {
      const table = freshTable();
      const { client, plan } = explaining(database());
      const storage = createSqlStorage({ client, table });
      const sql = service(storage, {
        indexes: ['Id', ['Age', 'Score']],
        schema: { type: 'object', properties: { Id: { type: 'integer' }, Age: { type: 'integer' }, Score: { type: 'integer' } } },
      });
      await storage.ready();
      await database().query(
        `INSERT INTO ${table} (body) SELECT json_build_object('Id', i, 'Age', i % 40, 'Score', (i * 7919) % 10000)::text FROM generate_series(1, 20000) i`,
      );
      await database().query(`ANALYZE ${table}`);
      const rows = Array.from({ length: 20000 }, (_, k) => ({ Id: k + 1, Age: (k + 1) % 40, Score: ((k + 1) * 7919) % 10000 }));
      type Row = (typeof rows)[number];
      // The index gives both keys in order (forwards or backwards): forwards each run of ties
      // is sorted by id, backwards the index's last column (id DESC) gives them in id order;
      // with mixed directions it gives Age in order and only each Age group's rows are
      // sorted by Score, as the page needs them.
      for (const [uri, compare, presorted] of [
        [
          '/Person/_/order_asc=Age,Score&limit=10',
          (a: Row, b: Row) => a.Age - b.Age || a.Score - b.Score,
          /Presorted Key: .*'Age'.*'Score'/,
        ],
        [
          '/Person/_/order_desc=Age,Score&limit=10',
          (a: Row, b: Row) => b.Age - a.Age || b.Score - a.Score,
          // Read backwards, the index ends with id ascending: the ties' order too, no sort.
          /^(?![\s\S]*Sort)[\s\S]*Index Scan Backward using rx_/,
        ],
        [
          '/Person/_/order_asc=Age&order_desc=Score&limit=10',
          (a: Row, b: Row) => a.Age - b.Age || b.Score - a.Score,
          /Presorted Key: .*'Age'/,
        ],
      ] as const) {
        expect({ uri, rows: (await call(sql, 'GET', uri)).json }).toEqual({ uri, rows: [...rows].sort(compare).slice(0, 10) });
        const text = await plan();
        expect({ uri, text }).toEqual({ uri, text: expect.stringMatching(/Index Scan (Backward )?using rx_/) });
        expect({ uri, text }).toEqual({ uri, text: expect.stringMatching(presorted) });
        expect({ uri, text }).toEqual({ uri, text: expect.not.stringMatching(/Seq Scan|-> {2}Sort /) });
      }
    });
  });

  describe('search and distinct in SQL', () => {
    const TEXTS: Entity[] = [
      ...CLEAN,
      { Id: 20, Name: 'İstanbul', City: 'Kelvin \u212A', Note: 'say "hi"\\there' },
      { Id: 21, Name: 'ANN 3', City: 'ann 3', Note: { a: 1, b: 2 } },
      { Id: 22, Name: 'x', City: 'Oslo', Note: { b: 2, a: 1 } },
      { Id: 23, City: 'Oslo', Note: 1 },
      { Id: 24, City: null, Note: 1.5 },
      { Id: 25, Note: '1' },
    ];
    const PATTERNS = [
      'ann',
      'a_n',
      '_',
      '%',
      'nn 3',
      'ANN 3',
      'ann%203,CS',
      'i',
      'k',
      'İ',
      'ı',
      'K',
      '"hi"',
      '\\',
      'oslo',
      '"name":"ann"',
      'ünï',
      '😀',
      '}',
      'note,CS',
      ':1,',
    ];

    test('search: answers as the service does; ASCII needles and case-sensitive ones run in SQL with the page', async () => {
      const log: Applied[] = [];
      const storage = createSqlStorage({ client: database(), table: freshTable() });
      const spied = Object.assign(recording(storage, log), { searches: true });
      const sql = service(spied, { indexes: ['Name', 'City'] });
      expect((await call(sql, 'POST', '/Person', TEXTS)).status).toBe(201);
      const memory = service(new MemoryStorage(structuredClone(TEXTS)));
      for (const pattern of PATTERNS) {
        const search = `search=${encodeURIComponent(pattern).replace(/%2C/g, ',')}`;
        for (const uri of [
          `/Person/_/${search}`,
          `/Person/Id>2/${search}&order_desc=Name&limit=2`,
          `/Person/_/${search}&offset=1&limit=1`,
        ]) {
          await expectSame(memory, sql, uri);
        }
      }
      log.length = 0;
      await call(sql, 'GET', '/Person/_/search=ann%203&limit=2');
      await call(sql, 'GET', '/Person/_/search=ANN,CS&order_asc=Name&limit=2');
      expect(log).toEqual([
        { conditions: true, paging: true },
        { conditions: true, paging: true },
      ]);
    });

    test('with searchIndex, where pg_trgm is installed, a search is a trigram index scan', async () => {
      // Real PostgreSQL ships pg_trgm; PGlite does not load it: there the search scans, with the same answer.
      const trgm = await database()
        .query('CREATE EXTENSION IF NOT EXISTS pg_trgm')
        .then(
          () => true,
          () => false,
        );
      const table = freshTable();
      const { client, plan } = explaining(database());
      const storage = createSqlStorage({ client, table, searchIndex: true });
      const sql = service(storage);
      await storage.ready();
      await database().query(
        `INSERT INTO ${table} (body) SELECT '{"Id":' || i || ',"Hash":"' || md5(i::text) || '"}' FROM generate_series(1, 20000) i`,
      );
      // VACUUM moves the rows from GIN's pending list into the index, as autovacuum would.
      await database().query(`VACUUM ANALYZE ${table}`);
      const needle = createHash('md5').update('777').digest('hex').slice(3, 15).toUpperCase();
      expect((await call(sql, 'GET', `/Person/_/search=${needle}&select=Id`)).json).toEqual([{ Id: 777 }]);
      if (trgm) expect(await plan()).toMatch(/Bitmap Index Scan on rx_/);
      else expect(await plan()).not.toMatch(/rx_/);
    });

    test('distinct on indexed properties: first row of each group from SQL, answers as the service does', async () => {
      let returned = 0;
      const storage = createSqlStorage({ client: database(), table: freshTable() });
      const counting: Storage = {
        select: async (q) => {
          const result = await storage.select(q);
          returned += (result.entities as Entity[]).length;
          return result;
        },
        write: (b) => storage.write(b),
        useIndexes: (i) => storage.useIndexes(i),
      };
      const sql = service(counting, { indexes: ['Name', 'City', 'Note'] });
      expect((await call(sql, 'POST', '/Person', TEXTS)).status).toBe(201);
      const memory = service(new MemoryStorage(structuredClone(TEXTS)));
      for (const meta of [
        'select=City',
        'select=city,Note',
        'select=Note',
        'select=Note&order_desc=Note',
        'select=Name&limit=2',
        'select=City,Age',
      ]) {
        await expectSame(memory, sql, `/Person/_/${meta}&distinct=true`);
        await expectSame(memory, sql, `/Person/Id>3/${meta}&distinct=true`);
      }
      returned = 0;
      await call(sql, 'GET', '/Person/_/select=City&distinct=true');
      // One row per stored City value (missing and null apart), not one per entity.
      expect(returned).toBe(new Set(TEXTS.map((e) => JSON.stringify(e.City))).size);
    });
  });

  describe('no request loads a whole table: past maxRows a 400', () => {
    test('a query that would read more than maxRows rows is refused; narrower ones are answered', async () => {
      const storage = createSqlStorage({ client: database(), table: freshTable(), maxRows: 3 });
      const sql = service(storage, { indexes: ['Id'], schema: SCHEMA });
      await call(sql, 'POST', '/Person', [{ Id: 1 }, { Id: 2 }, { Id: 3 }, { Id: 4 }, { Id: 5 }]);
      // distinct needs every row at once (a plain GET streams past maxRows: stream-suite.ts).
      const refused = await call(sql, 'GET', '/Person/_/select=Id&distinct=true');
      expect(comparable(refused)).toEqual({ status: 400, code: 'InvalidMetaConditionValueType' });
      expect(JSON.stringify(refused.json)).toContain('maxRows');
      // Paged in SQL, or filtered to at most 3 rows: answered.
      expect((await call(sql, 'GET', '/Person/_/order_desc=Id&limit=2&select=Id')).json).toEqual([{ Id: 5 }, { Id: 4 }]);
      expect((await call(sql, 'GET', '/Person/Id>=3/select=Id')).json).toEqual([{ Id: 3 }, { Id: 4 }, { Id: 5 }]);
      expect((await call(sql, 'REPORT', '/Person')).json).toBe(5);
    });

    test('safepost of a few entities past maxRows rows: each match is looked up, not the whole table read', async () => {
      const storage = createSqlStorage({ client: database(), table: freshTable(), maxRows: 3 });
      const sql = service(storage, { indexes: ['Id'], schema: SCHEMA });
      await call(sql, 'POST', '/Person', [{ Id: 1 }, { Id: 2 }, { Id: 3 }, { Id: 4 }, { Id: 5 }]);
      const posted = await call(sql, 'POST', '/Person/_/safepost=Id', [
        { Id: 2, Name: 'two' },
        { Id: 7, Name: 'seven' },
        { Id: 2, Age: 2 },
      ]);
      expect(posted.status).toBeLessThan(300);
      expect((await call(sql, 'GET', '/Person/Id=2')).json).toEqual([{ Id: 2, Name: 'two', Age: 2 }]);
      expect((await call(sql, 'GET', '/Person/Id=7')).json).toEqual([{ Id: 7, Name: 'seven' }]);
      expect((await call(sql, 'REPORT', '/Person')).json).toBe(6);
    });

    test('a POST without its key past maxRows rows: the next key comes from the largest one, read as one row', async () => {
      for (const definition of [{ indexes: ['Id'], schema: SCHEMA }, {}]) {
        const storage = createSqlStorage({ client: database(), table: freshTable(), maxRows: 3 });
        const sql = service(storage, { ...definition, key: 'Id' });
        await call(sql, 'POST', '/Person', [{ Id: 1 }, { Id: 9 }, { Id: 3 }, { Id: 4 }, { Id: 5 }]);
        const posted = await call(sql, 'POST', '/Person', { Name: 'new' });
        expect(posted.status).toBe(201);
        expect((await call(sql, 'GET', '/Person/10')).json).toEqual([{ Name: 'new', Id: 10 }]);
      }
    });
  });
}
