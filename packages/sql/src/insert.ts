import type { Entity } from '@resourcery/core';
import type { Query } from './client.js';
import { keyColumnValue, takenKey } from './key-column.js';

/**
 * Inserts entities into a table in `query`'s transaction; their row ids in insert order.
 * With a key, a taken key inserts nothing (ON CONFLICT on the key's unique index) and
 * throws 409, so that the caller's transaction rolls back.
 */
export async function insertRows(query: Query, quoted: string, key: readonly string[] | null, inserts: Entity[]): Promise<string[]> {
  // `json` (not jsonb) keeps each entity's text as written, key order included.
  const rows = key
    ? await query<{ id: string }>(
        `INSERT INTO ${quoted} (body, key) SELECT e.value::text, nullif(k.value, 'null'::jsonb) FROM json_array_elements($1::text::json) WITH ORDINALITY AS e(value, n) ` +
          'JOIN jsonb_array_elements($2::text::jsonb) WITH ORDINALITY AS k(value, n) USING (n) ORDER BY n ON CONFLICT (key) DO NOTHING RETURNING id::text AS id',
        [JSON.stringify(inserts), JSON.stringify(inserts.map((e) => keyColumnValue(e, key)))],
      )
    : await query<{ id: string }>(
        `INSERT INTO ${quoted} (body) SELECT e.value::text FROM json_array_elements($1::text::json) WITH ORDINALITY AS e(value, n) ORDER BY e.n RETURNING id::text AS id`,
        [JSON.stringify(inserts)],
      );
  if (rows.length !== inserts.length) throw takenKey(inserts.length === 1 ? JSON.stringify(keyColumnValue(inserts[0], key!)) : undefined);
  // Ids are drawn in insert order; RETURNING's row order is not promised.
  return rows.map((r) => r.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
}
