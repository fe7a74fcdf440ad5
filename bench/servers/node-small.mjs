// GET /Person/id=7 over 50 entities: the node adapter, or bare node:http writing the same bytes.
//   node servers/node-small.mjs <data.json> adapter|bare
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { BARE_ETAG, SMALL_PATH } from './small.mjs';

const [file, mode] = process.argv.slice(2);
const { Person } = JSON.parse(readFileSync(file, 'utf8'));
let server;
if (mode === 'adapter') {
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage(Person) });
  server = createServer(service);
} else {
  server = http.createServer((req, res) => {
    const started = performance.now();
    if (req.method !== 'GET' || req.url !== SMALL_PATH) return void res.writeHead(404).end();
    const data = Person.filter((p) => p.id === 7);
    const elapsed = Math.round((performance.now() - started) * 1000) / 1000;
    const body = `{"Status":"success","Data":${JSON.stringify(data)},"DataCount":${data.length},"TimeElapsedMs":${elapsed}}`;
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), etag: BARE_ETAG });
    res.end(body);
  });
}
server.listen(0, '127.0.0.1', () => console.log(`node ${mode} at http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => process.exit(0));
