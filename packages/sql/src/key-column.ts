import { createHash } from 'node:crypto';
import type { Entity } from '@resourcery/core';
import { keyValues, takenKeyConflict } from '@resourcery/core/storage';
import type { Session } from './client.js';

/**
 * The resource key in the table (storage contract v2, core Storage.declareKey): a `key`
 * jsonb column holding the key's values as an array, read from each entity by the
 * service's own rule (property names case-insensitive) when it is written, and a unique
 * index on it, so the database refuses a second entity with one key whatever instance
 * writes it. Entities missing a key value store NULL there (never unique-checked). The
 * column's comment records which properties it holds, so a changed key refills it.
 */

/** The key column's value for an entity: its key values, or null when one is missing. */
export function keyColumnValue(entity: Entity, key: readonly string[]): unknown[] | null {
  const values = keyValues(entity, key);
  return values.some((v) => v === undefined || v === null) ? null : values;
}

/** The unique index's name, in the table's schema; a hash keeps it within 63 characters. */
export function keyIndexName(table: string): string {
  return `rk_${createHash('sha256').update(table).digest('hex').slice(0, 20)}`;
}

/** A taken key, refused by the unique index. */
export const takenKey = (shown = 'of an entity') => takenKeyConflict(`Another entity already has the key ${shown}; nothing was written`);

/**
 * Adds the column and its unique index when missing, and fills the column from the rows'
 * bodies when it holds another key (or none yet). Instances starting together take
 * turns on an advisory lock: one does the work, the others find it done.
 */
export async function prepareKeyColumn(
  session: Session,
  table: string,
  quoted: string,
  key: readonly string[],
  create: boolean,
): Promise<void> {
  const spec = JSON.stringify(key);
  const schema = table.includes('.') ? `"${table.split('.')[0]}".` : '';
  const index = keyIndexName(table);
  await session.transaction(async (query) => {
    await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`resourcery key ${table}`]);
    if (create) await query(`ALTER TABLE ${quoted} ADD COLUMN IF NOT EXISTS key jsonb`);
    const [column] = await query<{ spec: string }>(
      "SELECT coalesce(col_description(a.attrelid, a.attnum), '') AS spec FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attname = 'key' AND NOT a.attisdropped",
      [quoted],
    );
    if (column === undefined)
      throw new Error(`Table ${table} has no key column for the resource key ${key.join(', ')}: let the storage create it (create: true)`);
    if (column.spec === spec) {
      if (create) await query(`CREATE UNIQUE INDEX IF NOT EXISTS ${index} ON ${quoted} (key)`);
      return;
    }
    if (!create)
      throw new Error(`Table ${table} keeps another key (${column.spec || 'none'}) than ${spec}: let the storage refill it (create: true)`);
    // Refilled without the index, so rows trading keys never collide halfway.
    await query(`DROP INDEX IF EXISTS ${schema}${index}`);
    for (let after = '0'; ; ) {
      const rows = await query<{ id: string; body: string }>(
        `SELECT id::text AS id, body FROM ${quoted} WHERE id > $1::bigint ORDER BY id LIMIT 5000`,
        [after],
      );
      if (rows.length === 0) break;
      const values = rows.map((r) => [r.id, keyColumnValue(JSON.parse(r.body) as Entity, key)]);
      await query(
        `UPDATE ${quoted} AS t SET key = nullif(e -> 1, 'null'::jsonb) FROM jsonb_array_elements($1::text::jsonb) e WHERE t.id = (e ->> 0)::bigint`,
        [JSON.stringify(values)],
      );
      after = rows[rows.length - 1].id;
    }
    try {
      await query(`CREATE UNIQUE INDEX ${index} ON ${quoted} (key)`);
    } catch (e) {
      if ((e as { code?: string }).code !== '23505') throw e;
      throw new Error(`Table ${table} holds several entities with one key (${key.join(', ')}): make the key unique before declaring it`);
    }
    await query(`COMMENT ON COLUMN ${quoted}.key IS '${spec.replace(/'/g, "''")}'`);
  });
}
