import { createService, type Service } from '@resourcery/core';
import { createSqlStorage, openPglite, sqlStreamLog, type SqlClient } from '@resourcery/sql';
import { SseReader } from '../../core/test/sse-support';
import { startPostgres, type PostgresServer } from './postgres';

// Event streams across service instances sharing one database (docs/events.md, "Across
// instances"): an event raised on one instance reaches the streams of every other, and a
// stream resumes on any instance from an id another gave. On PGlite (in process) and on a
// real PostgreSQL server (LISTEN/NOTIFY over a pg Pool).
jest.setTimeout(60_000);

const STREAM = { accept: 'text/event-stream' };

interface Database {
  /** A client for one instance: PGlite is shared as is; PostgreSQL gives each instance a pool of its own. */
  client(): SqlClient;
  close(): Promise<void>;
}

describe.each([
  [
    'PGlite',
    async (): Promise<Database> => {
      const db = await openPglite();
      return { client: () => db, close: () => db.close() };
    },
  ],
  [
    'PostgreSQL',
    async (): Promise<Database> => {
      const server: PostgresServer = await startPostgres();
      return { client: () => server.pool(), close: () => server.stop() };
    },
  ],
])('event streams across instances on %s', (_name, open) => {
  let database: Database;
  let round = 0;
  const services: Service[] = [];
  beforeAll(async () => {
    database = await open();
  }, 120_000);
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.close()));
  });
  afterAll(() => database?.close());

  /** Instances on one database: one Person table, one event log. */
  function instances(n: number, retentionEvents?: number): Service[] {
    round++;
    return Array.from({ length: n }, () => {
      const client = database.client();
      // No polling: what reaches the other instance comes through the notification.
      const log = sqlStreamLog({ client, table: `events_${round}`, pollMs: 3_600_000 });
      const service = createService({ streams: { log, retentionEvents } });
      service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client, table: `people_${round}` }) });
      services.push(service);
      return service;
    });
  }

  async function subscribe(service: Service, uri: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const res = await service.handle({ method: 'GET', uri, headers: { ...STREAM, ...headers } });
    expect(res.status).toBe(200);
    const reader = new SseReader(res.body as AsyncIterable<string>);
    expect(await reader.nextAny()).toEqual({ comment: 'ok' });
    return reader;
  }

  const post = (service: Service, body: unknown) =>
    service.handle({ method: 'POST', uri: '/Person', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('an event raised on one instance reaches the streams of both, in the order raised', async () => {
    const [a, b] = instances(2);
    const onA = await subscribe(a, '/Person.Inserted');
    const onB = await subscribe(b, '/Person.Inserted/Age>30');
    expect((await post(a, { Id: 1, Age: 40 })).status).toBe(201);
    expect((await post(b, { Id: 2, Age: 20 })).status).toBe(201);
    expect((await post(b, { Id: 3, Age: 50 })).status).toBe(201);
    const seenByA = [];
    for (let i = 0; i < 3; i++) seenByA.push((await onA.nextJson()).data[0].Id);
    expect(seenByA).toEqual([1, 2, 3]);
    const first = await onB.nextJson();
    expect(first).toMatchObject({ event: 'Person.Inserted', data: [{ Id: 1, Age: 40 }] });
    expect((await onB.nextJson()).data).toEqual([{ Id: 3, Age: 50 }]);
  });

  test('a stream resumes on another instance from the id the first gave; past the retention it resets', async () => {
    const [a, b] = instances(2, 3);
    const onA = await subscribe(a, '/Person.Inserted');
    await post(a, { Id: 1 });
    const { id } = await onA.nextJson();
    await onA.close();
    await post(a, { Id: 2 });
    await post(b, { Id: 3 });
    const resumed = await subscribe(b, '/Person.Inserted', { 'last-event-id': id! });
    await post(a, { Id: 4 });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await resumed.nextJson()).data[0].Id);
    expect(ids).toEqual([2, 3, 4]);
    // Four more: the retention (3 events) no longer holds event 1's successors.
    for (let n = 5; n <= 8; n++) await post(b, { Id: n });
    for (let n = 5; n <= 8; n++) await resumed.nextJson();
    const late = await subscribe(a, '/Person.Inserted', { 'last-event-id': id! });
    expect((await late.next())?.event).toBe('reset');
    const other = await subscribe(a, '/Person.Inserted', { 'last-event-id': 'abc-1' });
    expect((await other.next())?.event).toBe('reset');
  });
});
