// Resourcery through the node adapter: one Person resource in memory.
//   node servers/node-adapter.mjs <data.json>
import { readFileSync } from 'node:fs';
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';

const { Person } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const service = createService();
service.addResource({ name: 'Person', storage: new MemoryStorage(Person) });
const server = createServer(service).listen(0, '127.0.0.1', () => {
  console.log(`node adapter at http://127.0.0.1:${server.address().port}`);
});
process.once('SIGTERM', () => process.exit(0));
