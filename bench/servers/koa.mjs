// Koa 3 serving GET /api/Person/id=7 over 50 entities, either through the adapter or by a
// bare handler producing the same bytes.
//   node servers/koa.mjs <data.json> adapter|bare
import { readFileSync } from 'node:fs';
import { createService, MemoryStorage } from '@resourcery/core';
import { createKoaMiddleware } from '@resourcery/koa';
import Koa from 'koa';
import { BARE_ETAG, envelope, SMALL_PATH } from './small.mjs';

const [file, mode] = process.argv.slice(2);
const { Person } = JSON.parse(readFileSync(file, 'utf8'));
const app = new Koa();
if (mode === 'adapter') {
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage(Person) });
  app.use(createKoaMiddleware(service, { prefix: '/api' }));
} else {
  const path = `/api${SMALL_PATH}`;
  app.use(async (ctx, next) => {
    const started = performance.now();
    if (ctx.method !== 'GET' || ctx.url !== path) return next();
    ctx.set('etag', BARE_ETAG);
    ctx.body = envelope(
      Person.filter((p) => p.id === 7),
      started,
    );
  });
}
const server = app.listen(0, '127.0.0.1', () => console.log(`koa ${mode} at http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => process.exit(0));
