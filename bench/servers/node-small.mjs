// GET /Person/id=7 over 50 entities: the node adapter, or bare node:http writing the same bytes.
//   node servers/node-small.mjs <data.json> adapter|bare [DIR]
// DIR: the adapter of another build (DIR/core/dist and DIR/node/dist, node's import of
// @resourcery/core pointed at DIR's core, as bench/small-get-cold.mjs --before takes it).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { bareBody, bareHeaders, SMALL_PATH } from './small.mjs';

const [file, mode, dir] = process.argv.slice(2);
const { Person } = JSON.parse(readFileSync(file, 'utf8'));
let server;
if (mode === 'adapter') {
  const build = (pkg, name) => (dir === undefined ? import(name) : import(path.join(path.resolve(dir), pkg, 'dist', 'index.js')));
  const { createService, MemoryStorage } = await build('core', '@resourcery/core');
  const { createServer } = await build('node', '@resourcery/node');
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage(Person) });
  server = createServer(service);
} else {
  server = http.createServer((req, res) => {
    const started = performance.now();
    if (req.method !== 'GET' || req.url !== SMALL_PATH) return void res.writeHead(404).end();
    const body = bareBody(Person, started);
    res.writeHead(200, bareHeaders(body));
    res.end(body);
  });
}
server.listen(0, '127.0.0.1', () => console.log(`node ${mode} at http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => process.exit(0));
