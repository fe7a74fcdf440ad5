export { createSqlStorage, SqlStorage, type SqlStorageOptions } from './sql-storage.js';
export { openPglite, type SqlClient } from './client.js';
export { tableNameFor } from './table-name.js';
export { sqlStreamLog, type SqlStreamLogOptions } from './stream-log.js';
export { waitForDatabase, type WaitOptions } from './wait.js';
