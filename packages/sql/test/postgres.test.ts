import { sqlSuite } from './sql-suite';
import { startPostgres } from './postgres';

// The same suite as sql.test.ts, on a real PostgreSQL server through a pg.Pool.
sqlSuite(async () => {
  const server = await startPostgres();
  return { client: server.pool(), close: () => server.stop() };
});
