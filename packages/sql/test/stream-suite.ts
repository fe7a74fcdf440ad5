import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createService, MemoryStorage, type Entity, type ResourceDefinition, type Service } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { createSqlStorage, type SqlClient } from '@resourcery/sql';
import { call } from './support';

const JSONL = { accept: 'application/jsonlines' };
const EXCEL = { accept: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' };

/** Lines of JSON Lines text, parsed. */
const parseLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Entity);

/**
 * Past maxRows, a GET whose answer is written one entity at a time streams the rows in
 * batches (SelectQuery.stream, issue 12 item 5) instead of refusing; every other read
 * keeps the refusal. Run on PGlite and real PostgreSQL by sqlSuite.
 */
export function streamSuite(database: () => SqlClient, freshTable: () => string): void {
  describe('past maxRows, rows written one at a time are streamed in batches', () => {
    const ROWS = 40;
    const people = Array.from({ length: ROWS }, (_, i) => ({ Id: i + 1, Name: `N${(i * 7) % 13}`, Wide: 'x'.repeat((i + 1) * 3000) }));

    async function seeded(client = database(), table = freshTable(), extra: Partial<ResourceDefinition> = {}): Promise<Service> {
      const writer = createSqlStorage({ client: database(), table });
      await writer.write({ insert: structuredClone(people) });
      const service = createService();
      service.addResource({ name: 'Person', storage: createSqlStorage({ client, table, maxRows: 7 }), ...extra });
      return service;
    }

    async function text(
      service: Service,
      uri: string,
      headers: Record<string, string>,
    ): Promise<{ status: number; text: string; streamed: boolean }> {
      const res = await service.handle({ method: 'GET', uri, headers });
      let out = '';
      if (typeof res.body === 'string') out = res.body;
      else if (res.body !== null && !(res.body instanceof Uint8Array))
        for await (const c of res.body) out += typeof c === 'string' ? c : Buffer.from(c).toString();
      return { status: res.status, text: out, streamed: res.body !== null && typeof res.body !== 'string' };
    }

    test('JSON Lines, raw JSON and the envelope answer every row, in storage order, with select, offset, limit and conditions', async () => {
      const service = await seeded();
      const lines = await text(service, '/Person', JSONL);
      expect(lines.status).toBe(200);
      expect(parseLines(lines.text)).toEqual(people);
      const raw = await text(service, '/Person/_/select=Id,Name', { accept: 'application/json;raw=true' });
      expect(raw.streamed).toBe(true);
      expect(JSON.parse(raw.text)).toEqual(people.map(({ Id, Name }) => ({ Id, Name })));
      const envelope = JSON.parse((await text(service, '/Person/_/select=Id', { accept: 'application/json' })).text);
      expect(envelope).toMatchObject({ Status: 'success', DataCount: ROWS });
      expect(envelope.Data).toEqual(people.map(({ Id }) => ({ Id })));
      const page = await text(service, '/Person/_/select=Id&offset=5&limit=20', JSONL);
      expect(parseLines(page.text).map((e) => e.Id)).toEqual(people.slice(5, 25).map((p) => p.Id));
      const some = await text(service, '/Person/Id>10&Name!=N0/select=Id', JSONL);
      expect(parseLines(some.text).map((e) => e.Id)).toEqual(people.filter((p) => p.Id > 10 && p.Name !== 'N0').map((p) => p.Id));
      // Within maxRows nothing changes: an array, its ETag for one entity.
      expect((await call(service, 'GET', '/Person/Id=3')).headers.etag).toBeDefined();
      expect((await call(service, 'GET', '/Person/_/limit=5')).json).toEqual(people.slice(0, 5));
    });

    test('generated queries past a small maxRows: streamed answers are MemoryStorage answers', async () => {
      const table = freshTable();
      await createSqlStorage({ client: database(), table }).write({ insert: structuredClone(people) });
      const sql = createService();
      sql.addResource({ name: 'Person', storage: createSqlStorage({ client: database(), table, maxRows: 3 }) });
      const memory = createService();
      memory.addResource({ name: 'Person', storage: new MemoryStorage(structuredClone(people)) });
      let streamed = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('_', 'Id>4', 'Name=N3', 'Name!=N1&Id<=33', 'Wide.Length>30000', 'Missing=null'),
          fc.constantFrom('', 'select=Id', 'select=Name,Id', 'offset=2', 'limit=9', 'offset=4&limit=30&select=Id', 'offset=50'),
          fc.constantFrom(JSONL, { accept: 'application/json;raw=true' }, { accept: 'application/json' }),
          async (where, meta, headers) => {
            const uri = `/Person/${where}${meta ? `/${meta}` : ''}`;
            const [s, m] = [await text(sql, uri, headers), await text(memory, uri, headers)];
            if (s.streamed && headers !== JSONL && s.status === 200) streamed++;
            const body = (t: string) => (headers === JSONL ? parseLines(t) : t === '' ? undefined : JSON.parse(t));
            const strip = (b: unknown) => (b !== null && typeof b === 'object' && 'TimeElapsedMs' in b ? { ...b, TimeElapsedMs: 0 } : b);
            expect({ uri, status: s.status, body: strip(body(s.text)) }).toEqual({ uri, status: m.status, body: strip(body(m.text)) });
          },
        ),
        { numRuns: 60 },
      );
      expect(streamed).toBeGreaterThan(10);
    }, 120_000);

    test('ordered by a typed indexed property (ties, missing values, both directions): streamed by keyset, as MemoryStorage orders', async () => {
      const scored = people.map(({ Wide: _, ...p }, i) => (i % 5 === 0 ? p : { ...p, Score: (i * 3) % 7 }));
      const table = freshTable();
      await createSqlStorage({ client: database(), table }).write({ insert: structuredClone(scored) });
      const definition = {
        schema: { type: 'object', properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Score: { type: 'number' } } },
        indexes: ['Name', 'Score'],
      } as const;
      const sql = createService();
      sql.addResource({ name: 'Person', storage: createSqlStorage({ client: database(), table, maxRows: 3 }), ...definition });
      const memory = createService();
      memory.addResource({ name: 'Person', storage: new MemoryStorage(structuredClone(scored)), ...definition });
      for (const order of ['order_asc=Name', 'order_desc=Name', 'order_asc=Score', 'order_desc=Score'])
        for (const rest of ['', '&select=Id', '&offset=4&limit=20', '&offset=37']) {
          const uri = `/Person/Name!=N5/${order}${rest}`;
          const [s, m] = [await text(sql, uri, JSONL), await text(memory, uri, JSONL)];
          expect({ uri, status: s.status, body: parseLines(s.text) }).toEqual({ uri, status: m.status, body: parseLines(m.text) });
        }
      expect((await text(sql, '/Person/_/order_asc=Score', JSONL)).streamed).toBe(true);
    });

    test('where the whole result is needed first, past maxRows is still a 400 naming maxRows', async () => {
      const service = await seeded();
      const hooked = await seeded(database(), freshTable(), { hooks: { afterRead: (entities) => entities } });
      const refused = [
        await call(service, 'GET', '/Person/_/order_desc=Name'),
        await call(service, 'GET', '/Person/_/select=Name&distinct=true'),
        await call(service, 'GET', '/Person', undefined, { accept: 'application/json', 'if-none-match': '"1.0"' }),
        await call(hooked, 'GET', '/Person'),
      ];
      for (const reply of refused) {
        expect(reply.status).toBe(400);
        expect(JSON.stringify(reply.json)).toContain('maxRows');
      }
      // Excel writes a header row of every property first.
      expect((await text(service, '/Person', EXCEL)).status).toBe(400);
    });

    test('a database error after the headers went out cuts the response; the server answers the next request', async () => {
      const real = database();
      let fail = false;
      // The later batches (`r.id > ...`) fail once `fail` is set.
      const failing: SqlClient = {
        query: (sql, params) => (fail && sql.includes('r.id > (') ? Promise.reject(new Error('connection lost')) : real.query(sql, params)),
      };
      const service = await seeded(failing);
      const server = createServer(service);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        fail = true;
        // The first batch (8 rows, over one 64 KiB chunk) went out with the headers; the next query fails.
        const res = await fetch(`${base}/Person`, { headers: JSONL });
        expect(res.status).toBe(200);
        await expect(res.text()).rejects.toThrow();
        fail = false;
        const again = await fetch(`${base}/Person`, { headers: JSONL });
        expect(parseLines(await again.text())).toHaveLength(ROWS);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
}
