import { sqlSuite } from './sql-suite';
import { startPostgres } from './postgres';

// The same suite as sql.test.ts, on a real PostgreSQL server through a pg.Pool.
// Thousands of round trips to a server sharing the machine: more time than in-process PGlite.
jest.setTimeout(60_000);
sqlSuite(async () => {
  const server = await startPostgres();
  return { client: server.pool(), close: () => server.stop() };
});
