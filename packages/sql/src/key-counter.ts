import type { Query, Session } from './client.js';

/**
 * Generated keys across instances (core Storage.nextKeys, docs/keys.md): one row per
 * table in `resourcery_keys` (in the table's schema) holds the next number to hand out.
 * A reservation is one statement (in a transaction that does not wait for the disk, see
 * reserveKeys): it reads the largest whole-number key through the key column's unique
 * index (one row, whatever the table's size) and advances the counter past it under the
 * counter row's lock, so instances never take one number and no POST
 * is refused for a key another instance generated. Like a sequence, a number taken by an
 * insert that then failed, or by an entity since deleted, is not handed out again.
 */

/** The counters' table, beside the entities' table. */
function counterTable(table: string): string {
  return table.includes('.') ? `"${table.split('.')[0]}".resourcery_keys` : 'resourcery_keys';
}

/** Creates the counters' table when missing; instances take turns on an advisory lock (catalog races). */
export async function prepareCounters(session: Session, table: string): Promise<void> {
  await session.transaction(async (query) => {
    await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`resourcery create ${counterTable(table)}`]);
    await query(`CREATE TABLE IF NOT EXISTS ${counterTable(table)} (name text PRIMARY KEY, next numeric NOT NULL)`);
  });
}

/**
 * Whether every stored key is a number: jsonb orders strings below numbers and booleans,
 * arrays and objects above them, so the smallest and the largest key (two index reads) tell.
 */
async function onlyNumbers(query: Query, quoted: string): Promise<boolean> {
  const [{ low, high }] = await query<{ low: string | null; high: string | null }>(
    `SELECT (SELECT jsonb_typeof(key -> 0) FROM ${quoted} WHERE key IS NOT NULL ORDER BY key LIMIT 1) AS low, ` +
      `(SELECT jsonb_typeof(key -> 0) FROM ${quoted} WHERE key IS NOT NULL ORDER BY key DESC LIMIT 1) AS high`,
  );
  return (low === null || low === 'number') && (high === null || high === 'number');
}

/** The first of `count` numbers reserved for `table`'s generated keys (see the module's comment). */
export async function reserveKeys(
  session: Session,
  table: string,
  quoted: string,
  count: number,
  atLeast: number,
  onlyIfNumbers: boolean,
): Promise<number | null> {
  // One transaction committed without waiting for its flush to disk: the counter row is
  // locked only while the statement runs, so POSTs of several instances do not queue
  // behind each other's disk flush, and a POST waits for one flush (its insert's), not
  // two. The reservation still reaches the disk before any entity holding one of its
  // numbers does (the log is written in order, and the insert's commit waits for it), so
  // a database crash can forget only numbers no stored entity holds (docs/keys.md).
  return session.transaction(async (query) => {
    await query('SET LOCAL synchronous_commit TO off');
    if (onlyIfNumbers && !(await onlyNumbers(query, quoted))) return null;
    return reserve(query, table, quoted, count, atLeast);
  });
}

async function reserve(query: Query, table: string, quoted: string, count: number, atLeast: number): Promise<number> {
  // The largest number: the last key below '[false]' (booleans, arrays and objects sort above numbers).
  const [{ first }] = await query<{ first: string }>(
    `WITH largest AS (SELECT coalesce((SELECT CASE WHEN jsonb_typeof(key -> 0) = 'number' THEN floor((key ->> 0)::numeric) END ` +
      `FROM ${quoted} WHERE key IS NOT NULL AND key < '[false]'::jsonb ORDER BY key DESC LIMIT 1), 0) AS n) ` +
      `INSERT INTO ${counterTable(table)} AS c (name, next) SELECT $1, greatest(largest.n + 1, $2::numeric) + $3::numeric FROM largest ` +
      'ON CONFLICT (name) DO UPDATE SET next = greatest(c.next, excluded.next - $3::numeric) + $3::numeric ' +
      'RETURNING (c.next - $3::numeric)::text AS first',
    [table, String(atLeast), String(count)],
  );
  return Number(first);
}
