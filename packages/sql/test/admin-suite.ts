import { createService, type Service } from '@resourcery/core';
import { createSqlStorage, tableNameFor, type SqlClient } from '@resourcery/sql';
import { call, comparable } from './support';

/**
 * Admin state of two Service instances on one database (issue 12 item 4), run on PGlite
 * and on real PostgreSQL by sqlSuite.
 */
export function adminSuite(database: () => SqlClient, prefix: () => string): void {
  function instances(): { a: Service; b: Service; close: () => Promise<void> } {
    const p = prefix();
    const options = { adminStorage: (name: string) => createSqlStorage({ client: database(), table: tableNameFor(name, p) }) };
    const [a, b] = [createService(options), createService(options)];
    for (const s of [a, b]) {
      s.addResource({ name: 'Person', storage: createSqlStorage({ client: database(), table: `${p}person` }) });
      s.addResource({ name: 'Log', storage: createSqlStorage({ client: database(), table: `${p}log` }), events: false });
    }
    return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
  }

  describe('admin state: names unique in the database, changes in force on every instance', () => {
    test('one macro name saved on two instances at once: exactly one is stored, the other is a 400', async () => {
      const { a, b, close } = instances();
      try {
        const names = ['x', 'y', 'z', 'w', 'v'];
        // Both instances have looked at the (empty) macros, as a running service has.
        await Promise.all([call(a, 'GET', '/$none'), call(b, 'GET', '/$none')]);
        const replies = await Promise.all(
          names.flatMap((n) => [
            call(a, 'POST', '/Service.Admin.Macro', { Name: n, Uri: '/Person' }),
            call(b, 'POST', '/Service.Admin.Macro', { Name: n.toUpperCase(), Uri: '/Log' }),
          ]),
        );
        const stored = (await call(a, 'GET', '/Service.Admin.Macro/_/select=Name')).json as Array<{ Name: string }>;
        expect(stored.map((m) => m.Name.toLowerCase()).sort()).toEqual([...names].sort());
        for (let i = 0; i < names.length; i++) {
          const pair = [comparable(replies[2 * i]), comparable(replies[2 * i + 1])].map(
            (r) => (r as { status: number; code?: string }).status,
          );
          expect(pair.sort()).toEqual([201, 400]);
        }
        expect(
          replies.filter((r) => r.status === 400).every((r) => (r.json as { ErrorCode: string }).ErrorCode === 'InvalidResourceEntity'),
        ).toBe(true);
      } finally {
        await close();
      }
    });

    test('a webhook paused, resumed and deleted on A: the next event B raises follows each change', async () => {
      const { a, b, close } = instances();
      const logged = async () => ((await call(a, 'GET', '/Log/_/select=Name')).json as Array<{ Name: string }> | undefined) ?? [];
      const raise = async (name: string) => {
        await call(b, 'POST', '/Person', { Name: name });
        await b.webhooks.idle();
      };
      try {
        const made = await call(a, 'POST', '/Service.Admin.Webhook', { Destination: '/Log', EventSelector: '/Person.Inserted' });
        expect(made.status).toBe(201);
        const id = made.json as Array<{ Id: string }> | { Id: string } as { Id: string } | Array<{ Id: string }>;
        const webhookId = Array.isArray(id) ? id[0].Id : id.Id;
        await raise('one');
        expect(await logged()).toEqual([{ Name: 'one' }]);
        expect((await call(a, 'PATCH', `/Service.Admin.Webhook/Id='${webhookId}'`, { IsPaused: true })).status).toBe(200);
        await raise('paused');
        expect(await logged()).toEqual([{ Name: 'one' }]);
        expect((await call(a, 'PATCH', `/Service.Admin.Webhook/Id='${webhookId}'`, { IsPaused: false })).status).toBe(200);
        await raise('two');
        expect(await logged()).toEqual([{ Name: 'one' }, { Name: 'two' }]);
        expect((await call(a, 'DELETE', `/Service.Admin.Webhook/Id='${webhookId}'`)).status).toBeLessThan(300);
        await raise('gone');
        expect(await logged()).toEqual([{ Name: 'one' }, { Name: 'two' }]);
      } finally {
        await close();
      }
    });
  });
}
