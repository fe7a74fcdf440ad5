#!/usr/bin/env node
// One service instance in a process of its own, for tests that kill it (kill -9): its
// resource Person and its webhooks live in PostgreSQL (tables with the given prefix), its
// webhook options come from the test. Argument: JSON { config, prefix, webhooks,
// destination }. It saves a webhook for Person.Inserted to `destination`, POSTs one
// Person and prints one JSON line with both statuses; then it delivers until killed.
// Runs on the built packages (dist), as the CLI tests do.
import { createService } from '@resourcery/core';
import { createSqlStorage, tableNameFor } from '@resourcery/sql';
import pg from 'pg';

const { config, prefix, webhooks, destination } = JSON.parse(process.argv[2]);
const pool = new pg.Pool({ ...config, max: 4 });
const service = createService({
  allowPrivateDestinations: true,
  webhooks,
  adminStorage: (name) => createSqlStorage({ client: pool, table: tableNameFor(name, prefix) }),
});
service.addResource({ name: 'Person', key: 'Id', storage: createSqlStorage({ client: pool, table: tableNameFor('Person', prefix) }) });
const post = async (uri, body) =>
  (await service.handle({ method: 'POST', uri, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status;
const webhook = await post('/Service.Admin.Webhook', { Destination: destination, EventSelector: '/Person.Inserted' });
const person = await post('/Person', { Id: 1 });
console.log(JSON.stringify({ webhook, person }));
// The worker's timers never keep a process alive: this one lives until it is killed.
setInterval(() => undefined, 60_000);
