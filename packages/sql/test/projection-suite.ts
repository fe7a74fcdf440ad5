import fc from 'fast-check';
import { MemoryStorage, type Entity, type Storage } from '@resourcery/core';
import type { SelectQuery } from '@resourcery/core/storage';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call, recased, serviceOn } from './support';

/** What select was asked to read, and how many members the entities it returned had. */
interface Seen {
  select: string[] | undefined;
  members: number;
}

/** A storage seen through (stamps included, so the service still offers `select`). */
function spying(storage: Storage, log: Seen[]): Storage {
  return {
    select: async (query: SelectQuery) => {
      const result = await storage.select(query);
      let members = 0;
      for (const e of result.entities as Entity[]) members += Object.keys(e).length;
      log.push({ select: query.select?.map((l) => l.text), members });
      return result;
    },
    write: (batch) => storage.write(batch),
    stamp: (entity) => storage.stamp!(entity),
  };
}

/** The keys conditions and order read in this suite. */
const ORDERED = new Set(['name', 'age', 'tags', 'address']);

const KEYS = ['Name', 'Age', 'Address', 'Tags', 'City', 'Address.City', 'Größe', '2024', 'Length', 'Id'];

/**
 * `select` pushed down to SQL (SelectQuery.select, issue 12 item 5): the storage returns
 * only the members the service reads, and every answer stays MemoryStorage's.
 */
export function projectionSuite(database: () => SqlClient, freshTable: () => string): void {
  describe('select pushed down: partial entities answer like whole ones', () => {
    /** Wide entities whose keys come in every case, several spellings of one key in one entity included. */
    const valueArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constant(null),
        fc.integer({ min: -5, max: 5 }),
        fc.constantFrom('Ann', 'ann', 'x', ''),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('City', 'city', 'CITY', 'Zip', '0'), tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    const keyArb = fc.tuple(fc.constantFrom(...KEYS, '\u212Aey', 'Key'), fc.nat()).map(([k, bits]) => recased(k, bits));
    const entityArb = fc
      .tuple(fc.dictionary(keyArb, valueArb, { maxKeys: 6 }), fc.array(fc.integer(), { minLength: 12, maxLength: 12 }))
      // Padding makes them wide, as in the tables this is for. Conditions and order read
      // Name, Age, Tags and Address: one spelling each there (SQL conditions and order
      // are not exact over several spellings of one key, which select is).
      .map(([e, pad]) => {
        const seen = new Set<string>();
        const once = ([k]: [string, unknown]) => !ORDERED.has(k.toLowerCase()) || (!seen.has(k.toLowerCase()) && seen.add(k.toLowerCase()));
        return { ...Object.fromEntries(Object.entries(e).filter(once)), ...Object.fromEntries(pad.map((v, i) => [`Pad${i}`, v])) };
      });
    const selectArb = fc
      .array(
        fc.tuple(fc.constantFrom(...KEYS, 'Address.city', 'Tags.Length', 'Tags.0', 'key', 'Name.Length', 'Address.City.0'), fc.nat()),
        { minLength: 1, maxLength: 3 },
      )
      .map((list) => list.map(([k, bits]) => encodeURIComponent(recased(k, bits))).join(','));
    const restArb = fc.constantFrom('', '&distinct=true', '&order_desc=Age', '&order_asc=Address.City&limit=3', '&offset=1&limit=2');
    const conditionsArb = fc.constantFrom('_', 'Age>0', 'name=ann', 'Tags.Length>=1');

    test('random wide entities, case variants, dotted selects: same answers, fewer members read', async () => {
      const log: Seen[] = [];
      let cut = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(entityArb, { maxLength: 6 }),
          conditionsArb,
          selectArb,
          restArb,
          async (entities, where, select, rest) => {
            const memory = serviceOn(new MemoryStorage(structuredClone(entities)));
            const storage = createSqlStorage({ client: database(), table: freshTable() });
            await storage.write({ insert: structuredClone(entities) });
            const sql = serviceOn(spying(storage, log));
            const uri = `/Person/${where}/select=${select}${rest}`;
            const [m, s] = [await call(memory, 'GET', uri), await call(sql, 'GET', uri)];
            expect({ uri, status: s.status, body: s.json }).toEqual({ uri, status: m.status, body: m.json });
            const seen = log.pop()!;
            expect(seen.select).toBeDefined();
            const all = entities.filter(() => true).reduce((n, e) => n + Object.keys(e).length, 0);
            if (seen.members < all) cut++;
          },
        ),
        { numRuns: 80 },
      );
      // Most answers were read from partial rows (all but those of non-ASCII selects or empty tables).
      expect(cut).toBeGreaterThan(30);
      // A table per run, on a server that shares the machine.
    }, 180_000);

    test('a row holding the spelling select uses is cut whatever other spellings it has; any other is read whole', async () => {
      const rows = [
        { Id: 1, Name: 'exact', NAME: 'other', Pad: 'x'.repeat(50) },
        { Id: 2, NAME: 'only another spelling', Pad: 'x' },
        { Id: 3, name: 'lower', Name: 'exact too', Pad: 'x' },
        { Id: 4, Pad: 'no name' },
        { Id: 5, Name: 'only this spelling' },
      ];
      const log: Seen[] = [];
      const storage = createSqlStorage({ client: database(), table: freshTable() });
      await storage.write({ insert: structuredClone(rows) });
      const sql = serviceOn(spying(storage, log));
      const memory = serviceOn(new MemoryStorage(structuredClone(rows)));
      // The members the storage returned, row by row: a cut row has the selected ones it holds.
      const cases: Array<[string, number]> = [
        // Rows 1, 3 and 5 hold Name as select spells it: cut. Row 2 has only another
        // spelling: whole. Row 4 has none: cut to Id.
        ['/Person/_/select=Id,Name', 2 + 3 + 2 + 1 + 2],
        // Two spellings in one select, or one the rows do not use: only a row with no other
        // spelling than the stored one (Name) is cut.
        ['/Person/_/select=name,Name', 4 + 3 + 4 + 0 + 1],
        ['/Person/_/select=nAmE', 4 + 3 + 4 + 0 + 1],
      ];
      for (const [uri, members] of cases) {
        const [m, s] = [await call(memory, 'GET', uri), await call(sql, 'GET', uri)];
        expect({ uri, status: s.status, body: s.json }).toEqual({ uri, status: m.status, body: m.json });
        expect({ uri, members: log.pop()!.members }).toEqual({ uri, members });
      }
    });

    test('a single entity read through select has the ETag of the whole entity', async () => {
      const storage = createSqlStorage({ client: database(), table: freshTable() });
      await storage.write({ insert: [{ Id: 1, Name: 'Ann', Wide: 'x'.repeat(100) }, { Id: 2 }] });
      const service = serviceOn(storage);
      const whole = await call(service, 'GET', '/Person/Id=1');
      const part = await call(service, 'GET', '/Person/Id=1/select=name');
      expect(part.json).toEqual([{ Name: 'Ann' }]);
      expect(part.headers.etag).toBeDefined();
      expect(part.headers.etag).toBe(whole.headers.etag);
    });

    test('the hint is not given when the service reads more than select (add, a search it runs, toOutput)', async () => {
      const log: Seen[] = [];
      const storage = createSqlStorage({ client: database(), table: freshTable() });
      await storage.write({ insert: [{ Id: 1, Name: 'Ann', Age: 3 }] });
      const service = serviceOn(spying(storage, log));
      for (const uri of [
        '/Person/_/select=Name&add=Age',
        '/Person/_/select=Name&search_regex=Ann',
        '/Person/_/select=Name&rename=Age->Years',
      ])
        expect((await call(service, 'GET', uri)).json).toEqual([{ Name: 'Ann', ...(uri.includes('add=') ? { Age: 3 } : {}) }]);
      // The answers' reads carry no hint; the one hinted read is how add=Age finds the
      // property's stored spelling (docs/uri.md, "Output names"), which needs Age alone.
      expect(log.map((s) => s.select)).toEqual([['Age'], undefined, undefined, undefined]);
      await call(service, 'GET', '/Person/_/select=Name&order_desc=Age');
      expect(log.pop()).toEqual({ select: ['Name', 'Age'], members: 2 });
    });
  });
}
