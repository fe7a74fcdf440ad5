import { runInThisContext } from 'node:vm';
import { MemoryStorage, type Entity, type Storage } from '@resourcery/core';
import { compileConditions, parseUri } from '@resourcery/core/storage';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call, comparable, condition, OPERATORS, recording, serviceOn, type Applied } from './support';

/** A small seeded generator (mulberry32): the same data on every run and both databases. */
function random(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/**
 * Strings of the literal's ISO shape in every spelling Date.parse treats apart: ES5 and
 * legacy (space) forms, months and days out of range, years 0-99 (read as 2000-2099 or
 * month-day-year by the legacy parser), 24:00, fractions of 1-14 digits with leading
 * zeros, offsets with and without a colon, out-of-range offset fields.
 */
function isoSpelling(r: (n: number) => number): string {
  const pick = <T>(a: T[]) => a[r(a.length)];
  const dd = (lo: number, hi: number) => String(lo + r(hi - lo + 1)).padStart(2, '0');
  const year = pick(['0000', '0001', '0012', '0031', '0032', '0049', '0050', '0099', '1970', '2024', '2024', '2024', '9999']);
  let s = `${year}-${pick([dd(0, 13), dd(0, 99), dd(1, 12), '01'])}-${pick([dd(0, 32), dd(0, 99), dd(1, 31), '05', '29', '30', '31'])}`;
  if (r(5) === 0) return s;
  s += `${pick(['T', ' '])}${pick([dd(0, 25), dd(0, 99), '24', '10', '00'])}:${pick([dd(0, 61), dd(0, 99), '00', '59'])}`;
  if (r(2)) {
    s += `:${pick([dd(0, 61), '00', '59'])}`;
    if (r(2)) s += `.${Array.from({ length: 1 + r(14) }, () => pick(['0', '0', String(r(10))])).join('')}`;
  }
  const zone = r(4);
  if (zone === 1) s += 'Z';
  else if (zone > 1)
    s += `${pick(['+', '-'])}${pick([dd(0, 25), dd(0, 99), '00', '02'])}${pick([':', ''])}${pick([dd(0, 61), dd(0, 99), '00'])}`;
  return s;
}

/** The same instant spelled other ways (for `=`): canonical, without milliseconds, with an offset. */
function twins(time: number): string[] {
  const iso = new Date(time).toISOString();
  const shifted = new Date(time + 150 * 60_000).toISOString();
  return [iso, iso.replace('.000Z', 'Z'), `${shifted.slice(0, 19)}+02:30`, `${iso.slice(0, 10)} ${iso.slice(11, 23)}Z`];
}

/** Days written near the literal's that large offsets, 24:00 and rolled-over days move across it. */
function nearby(time: number, r: (n: number) => number): string[] {
  const out: string[] = [];
  for (let k = -6; k <= 6; k++) {
    const day = new Date(time + k * 86_400_000).toISOString().slice(0, 10);
    out.push(day + [' 10:00-9999', ' 23:59+9999', 'T24:00', 'T00:00-23:59', 'T23:59+23:59', ' 00:00-99:59', ''][r(7)]);
  }
  const month = new Date(time).toISOString().slice(0, 8);
  out.push(`${month}31T12:00Z`, `${month}30 23:00-9999`, `${month}31 24:00-9999`);
  return out;
}

const NOT_DATES: unknown[] = [
  '1999-01-05x',
  '2050-12-31 junk',
  '1990-01-01T00:00:00.00000000000000000000Z',
  'not a date',
  '2024-01-05x',
  '2024-1-5',
  ' 2024-01-05',
  '2024-01-05T10:00:00.0000000000000000Z',
  '',
  20240105,
  null,
  true,
  ['2024-01-05'],
  { d: 1 },
];

/** What only the legacy parser accepts, or reads its own way, next to the literals' day. */
const QUIRKS = [
  '2024-01-05 10:00+0299',
  '2024-01-05 10:00-9999',
  '2024-01-05 10:00+99:30',
  '2024-01-05T10:00+0260',
  '2024-01-05 24:00:00.0001Z',
  '2024-01-05T24:00:00.0001Z',
  '2024-01-05T10:00:00.0001234567891Z',
  '0012-13-01',
  '0005-01-00',
  '0024-01-05 10:00Z',
  '0001-05-24',
  '0001-05-24 10:00',
];

/** Literals that Date.parse reads, in many spellings, and the data: their twins, spellings, other values. */
function dataSet(seed: number): { literals: string[]; entities: Entity[] } {
  const r = random(seed);
  const literals = ['2024-01-05', '2024-01-05T10:00', '2024-01-05 10:00+02:00', '0012-05-06 10:00', '2024-02-30T24:00'];
  while (literals.length < 16) {
    const s = isoSpelling(r);
    if (!Number.isNaN(Date.parse(s))) literals.push(s);
  }
  const values: unknown[] = [...NOT_DATES, ...QUIRKS];
  for (const l of literals) values.push(l, ...twins(Date.parse(l)), ...nearby(Date.parse(l), r));
  // Canonical UTC times near the literals, and on days that roll over (February 29-31).
  for (let i = 0; i < 40; i++)
    values.push(new Date(Date.parse(literals[i % literals.length]) + (r(2001) - 1000) * 3_600_000).toISOString());
  values.push(
    '2023-02-29T00:00:00.000Z',
    '2024-02-30T10:00:00.000Z',
    '2024-04-31T00:00:00.000Z',
    '1900-02-29T00:00:00.000Z',
    '2000-02-29T00:00:00.000Z',
  );
  while (values.length < 700) values.push(isoSpelling(r));
  return { literals, entities: values.map((When, i) => ({ Id: i, When })) };
}

/** Runs `body` with the process's time zone set to `zone` (jest gives tests a copy of process.env). */
async function inZone(zone: string, body: () => Promise<void>): Promise<void> {
  const before = runInThisContext('process.env.TZ') as string | undefined;
  runInThisContext(`process.env.TZ = ${JSON.stringify(zone)}`);
  try {
    await body();
  } finally {
    runInThisContext(before === undefined ? 'delete process.env.TZ' : `process.env.TZ = ${JSON.stringify(before)}`);
  }
}

/**
 * Date conditions in SQL against the core's evaluator, on adversarial spellings of ISO
 * dates: exact when the process's zone has one offset, a superset the service re-checks
 * otherwise.
 */
export function dateSuite(db: () => SqlClient, freshTable: () => string): void {
  describe('date conditions compare in SQL exactly as the core does', () => {
    const { literals, entities } = dataSet(12);
    let storage: Storage;

    beforeAll(async () => {
      storage = createSqlStorage({ client: db(), table: freshTable() });
      await storage.write({ insert: structuredClone(entities) });
    });

    /** Every literal with every operator: SQL's rows next to the core's, and whether SQL said it was exact. */
    async function compare(expectExact: boolean): Promise<void> {
      for (const literal of literals) {
        for (const op of OPERATORS) {
          const { conditions } = parseUri(`/Person/${condition('When', op, literal)}`);
          const predicate = compileConditions(conditions)!;
          const result = await storage.select({ conditions, predicate, order: null, offset: 0, limit: -1 });
          const got = (result.entities as Entity[]).map((e) => e.Id);
          const want = entities.filter(predicate).map((e) => e.Id);
          const query = `When${op}${literal}`;
          expect({ query, exact: result.conditionsApplied }).toEqual({ query, exact: expectExact });
          if (expectExact) expect({ query, got }).toEqual({ query, got: want });
          else expect({ query, missing: want.filter((id) => !got.includes(id)) }).toEqual({ query, missing: [] });
        }
      }
    }

    test('the data covers what Date.parse treats apart: NaN, legacy and ES5 spellings, equal instants', () => {
      const parsed = entities.map((e) => (typeof e.When === 'string' && e.When.length <= 35 ? Date.parse(e.When) : NaN));
      expect(parsed.filter(Number.isNaN).length).toBeGreaterThan(50);
      expect(
        entities.filter((e, i) => typeof e.When === 'string' && e.When[10] === ' ' && !Number.isNaN(parsed[i])).length,
      ).toBeGreaterThan(20);
      expect(
        entities.filter((e, i) => typeof e.When === 'string' && e.When[10] === 'T' && !Number.isNaN(parsed[i])).length,
      ).toBeGreaterThan(20);
    });

    test('in UTC every spelling is exact in SQL', async () => {
      await inZone('UTC', () => compare(true));
    });

    test('in a zone with one offset (Etc/GMT-3) local times are exact too', async () => {
      await inZone('Etc/GMT-3', () => compare(true));
    });

    test.each(['Europe/Paris', 'America/Sitka'])(
      'in %s (offsets change) SQL keeps a superset and the service answers exactly',
      async (zone) => {
        await inZone(zone, async () => {
          await compare(false);
          const memory = serviceOn(new MemoryStorage(structuredClone(entities)));
          const sql = serviceOn(storage);
          for (const literal of literals.slice(0, 6)) {
            const uri = `/Person/${condition('When', '>=', literal)}/order_asc=Id&limit=5`;
            expect({ uri, ...(comparable(await call(sql, 'GET', uri)) as object) }).toEqual({
              uri,
              ...(comparable(await call(memory, 'GET', uri)) as object),
            });
          }
        });
      },
    );

    test('a selective date condition over many non-canonical dates answers within a small maxRows, paged in SQL', async () => {
      const spelled = Array.from({ length: 60 }, (_, i) => ({
        Id: i,
        When: `2024-01-${String(1 + (i % 28)).padStart(2, '0')} 1${i % 10}:00+01:00`,
      }));
      const table = createSqlStorage({ client: db(), table: freshTable(), maxRows: 10 });
      await table.write({ insert: structuredClone(spelled) });
      const log: Applied[] = [];
      const sql = serviceOn(recording(table, log));
      const memory = serviceOn(new MemoryStorage(structuredClone(spelled)));
      for (const uri of ['/Person/When<2024-01-02T12:00Z', '/Person/When>=2024-01-10/limit=3', '/Person/When=2024-01-05T13:00:00.000Z']) {
        const reply = await call(sql, 'GET', uri);
        expect({ uri, status: reply.status }).toEqual({ uri, status: 200 });
        expect(comparable(reply)).toEqual(comparable(await call(memory, 'GET', uri)));
      }
      expect(log.every((a) => a.conditions && a.paging)).toBe(true);
    });
  });
}
