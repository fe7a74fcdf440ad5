import { openPglite } from '@resourcery/sql';
import { sqlSuite } from './sql-suite';

sqlSuite(async () => {
  const db = await openPglite();
  return { client: db, close: () => db.close() };
});
