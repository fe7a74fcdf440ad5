import fc from 'fast-check';
import { MemoryStorage, type Entity, type Storage } from '@resourcery/core';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { compileSearch, parseSearchSettings } from '../../core/src/query/search';
import { lowerSources } from '../src/search-distinct';
import { call, comparable, recording, serviceOn, type Applied } from './support';

/** Characters JavaScript's lower-casing treats apart: sigma (final or not), dotted and dotless i, KELVIN SIGN, sharp s, emoji, escapes. */
const CHARS = [
  'ΟΔΟΣ',
  'aΣ',
  'Σ',
  'σ',
  'ς',
  'Α',
  'İ',
  'ı',
  'i',
  'I',
  '\u0307',
  '\u212A',
  'k',
  'K',
  'ß',
  'ẞ',
  's',
  'S',
  '😀',
  'é',
  'É',
  'a',
  'A',
  ' ',
  '"',
  '\\',
  '\n',
  '1',
  'e',
  '+',
  '.',
  '-',
];
const textArb = fc.array(fc.constantFrom(...CHARS), { maxLength: 6 }).map((a) => a.join(''));
const SCOPES = ['Name', 'name', 'NOTE', 'Tags', 'Tags.0', 'Tags.Length', 'Note.a', 'Größe', 'größe.length', 'Missing', ''];

const valueArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    textArb,
    textArb,
    fc.constantFrom(null, true, false, 0, -0, 1.5, 1e21, 1.5e-7, -2e-7, 123456789, 1e300),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'Σ', 'k'), tie('value'), { maxKeys: 2 }),
  ),
})).value;

const entityArb = fc.record({ Name: valueArb, Note: valueArb, Tags: valueArb, Größe: valueArb }, { requiredKeys: [] });

/** A needle: random characters, or a piece of an entity's text in another case. */
const needleArb = fc.oneof(
  textArb.filter((t) => t !== ''),
  fc.constantFrom('σ', 'ς', 'i̇', 'k', 'ß', 'ss', '1e', 'e+21', 'true', '"a"', '\\"', '😀'),
);

/** Where to cut a needle out of an entity's JSON text, and which of its characters to flip the case of. */
const cutArb = fc.record({ entity: fc.nat(), start: fc.nat(), length: fc.integer({ min: 1, max: 5 }), flips: fc.nat() });

function pieceOf(text: string, cut: { start: number; length: number; flips: number }): string {
  const chars = [...text];
  const start = cut.start % chars.length;
  return chars
    .slice(start, start + cut.length)
    .map((c, i) => ((cut.flips >> i) & 1 ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c))
    .join('');
}

/**
 * `search` in SQL against the core's search, on mixed Unicode: exact where SQL says so,
 * otherwise a superset (never a row the core keeps left out), on PGlite and PostgreSQL.
 */
export function searchSuite(db: () => SqlClient, freshTable: () => string): void {
  describe('scoped and non-ASCII search in SQL', () => {
    async function stored(entities: Entity[], maxRows?: number): Promise<Storage> {
      const storage = createSqlStorage({ client: db(), table: freshTable(), maxRows });
      await storage.write({ insert: structuredClone(entities) });
      return storage;
    }

    test('lowerSources: every character whose lower case holds the given one (Σ for ς as a final sigma)', () => {
      expect(lowerSources('σ')).toEqual(['Σ']);
      expect(lowerSources('ς')).toEqual(['Σ']);
      expect(lowerSources('\u0307')).toEqual(['İ']);
      expect(lowerSources('ß')).toEqual(['ẞ']);
      // Nothing beyond plane 1 lower-cases (the table is made over planes 0 and 1).
      const lowered: number[] = [];
      for (let cp = 0x20000; cp < 0x110000; cp += 1)
        if (String.fromCodePoint(cp).toLowerCase() !== String.fromCodePoint(cp)) lowered.push(cp);
      expect(lowered).toEqual([]);
    });

    test('random entities and needles, every scope, CS and CI: exact when SQL says so, else never a match left out', async () => {
      const seen = { exact: 0, superset: 0, found: 0 };
      await fc.assert(
        fc.asyncProperty(
          fc.array(entityArb, { minLength: 1, maxLength: 8 }),
          fc.array(fc.tuple(needleArb, fc.constantFrom(...SCOPES), fc.constantFrom('', ',CS', ',CI'), fc.option(cutArb)), {
            minLength: 4,
            maxLength: 12,
          }),
          async (generated, searches) => {
            const entities = generated.map((e, i) => ({ Id: i, ...e }));
            const storage = await stored(entities);
            for (const [random, scope, cs, cut] of searches) {
              const needle = (cut && pieceOf(JSON.stringify(entities[cut.entity % entities.length]), cut)) || random;
              const value = `${needle}${scope === '' && cs === '' ? '' : `,${scope}`}${cs}`;
              const search = parseSearchSettings(value);
              const result = await storage.select({ conditions: [], predicate: null, order: null, offset: 0, limit: -1, search });
              const got = (result.entities as Entity[]).map((e) => e.Id);
              const matches = compileSearch(value);
              const want = entities.filter((e) => matches(e)).map((e) => e.Id);
              seen[result.conditionsApplied ? 'exact' : 'superset']++;
              if (want.length > 0) seen.found++;
              if (result.conditionsApplied) expect({ value, got }).toEqual({ value, got: want });
              else expect({ value, missing: want.filter((id) => !got.includes(id)) }).toEqual({ value, missing: [] });
            }
          },
        ),
        { numRuns: 60 },
      );
      expect(seen.exact).toBeGreaterThan(40);
      expect(seen.superset).toBeGreaterThan(40);
      expect(seen.found).toBeGreaterThan(15);
    }, 60_000);

    const PEOPLE: Entity[] = Array.from({ length: 60 }, (_, i) => ({
      Id: i,
      Name: ['Ann', 'Bo', 'Straße', 'ΟΔΟΣ', 'İzmir', 'Cy'][i % 6] + String(i),
      City: i % 7 === 0 ? 'Σparta' : 'Oslo',
      Tags: ['x', i],
    }));

    test('scoped and non-ASCII searches over a table past a small maxRows: answered, as the service does', async () => {
      const log: Applied[] = [];
      const storage = Object.assign(recording(await stored(PEOPLE, 10), log), { searches: true });
      const sql = serviceOn(storage);
      const memory = serviceOn(new MemoryStorage(structuredClone(PEOPLE)));
      const uris = [
        '/Person/_/search=ann,Name&limit=3',
        '/Person/_/search=ANN1,name,CS&order_desc=Id&limit=2',
        '/Person/_/search=strasse5',
        `/Person/_/search=${encodeURIComponent('straße56')}`,
        `/Person/_/search=${encodeURIComponent('οδος1')},Name`,
        `/Person/_/search=${encodeURIComponent('σpart')},City&limit=3`,
        `/Person/_/search=${encodeURIComponent('i̇zmir4')}`,
        '/Person/_/search=x,Tags.0&limit=2',
      ];
      for (const uri of uris) {
        const reply = await call(sql, 'GET', uri);
        expect({ uri, answered: reply.status < 300 }).toEqual({ uri, answered: true });
        expect({ uri, ...(comparable(reply) as object) }).toEqual({ uri, ...(comparable(await call(memory, 'GET', uri)) as object) });
      }
      expect(log.map((a) => a.conditions)).toEqual([true, true, true, false, false, false, false, true]);
    });

    test('a scoped search is exact until a row that could match holds an object or a number with an exponent in the scope', async () => {
      const log: Applied[] = [];
      const first = [
        { Id: 1, Note: 'a: 1' },
        { Id: 3, Note: 1e21 },
      ];
      const storage = Object.assign(recording(await stored(first), log), { searches: true });
      const sql = serviceOn(storage);
      const memory = serviceOn(new MemoryStorage(structuredClone(first)));
      const expectSame = async (uri: string, exact: boolean) => {
        log.length = 0;
        expect({ uri, ...(comparable(await call(sql, 'GET', uri)) as object) }).toEqual({
          uri,
          ...(comparable(await call(memory, 'GET', uri)) as object),
        });
        expect({ uri, exact: log[0].conditions }).toEqual({ uri, exact });
      };
      // 1e21 is "1e+21" in JavaScript, "1000000000000000000000" in jsonb: kept when its body holds the needle.
      await expectSame('/Person/_/search=a,Note', true);
      await expectSame('/Person/_/search=.,Note', true);
      await expectSame('/Person/_/search=e%2B21,Note', false);
      for (const service of [sql, memory]) expect((await call(service, 'POST', '/Person', [{ Id: 2, Note: { a: 1 } }])).status).toBe(201);
      for (const uri of ['/Person/_/search=a,Note', '/Person/_/search=%22a%22:1,Note', '/Person/_/search=1,Note'])
        await expectSame(uri, false);
      await expectSame('/Person/_/search=x,Note', true);
    });
  });
}
