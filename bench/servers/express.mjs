// Express 5 serving GET /api/Person/id=7 over 50 entities, either through the adapter or
// by a bare handler producing the same bytes. Both apps are configured alike (no ETag).
//   node servers/express.mjs <data.json> adapter|bare
import { readFileSync } from 'node:fs';
import { createService, MemoryStorage } from '@resourcery/core';
import { createExpressMiddleware } from '@resourcery/express';
import express from 'express';
import { BARE_ETAG, envelope, SMALL_PATH } from './small.mjs';

const [file, mode] = process.argv.slice(2);
const { Person } = JSON.parse(readFileSync(file, 'utf8'));
const app = express();
app.set('etag', false);
if (mode === 'adapter') {
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage(Person) });
  app.use('/api', createExpressMiddleware(service));
} else {
  app.use('/api', (req, res, next) => {
    const started = performance.now();
    if (req.method !== 'GET' || req.url !== SMALL_PATH) return next();
    res.set('etag', BARE_ETAG);
    res.json(
      envelope(
        Person.filter((p) => p.id === 7),
        started,
      ),
    );
  });
}
const server = app.listen(0, '127.0.0.1', () => console.log(`express ${mode} at http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => process.exit(0));
