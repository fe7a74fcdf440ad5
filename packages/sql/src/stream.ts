import type { Entity, SelectQuery } from '@resourcery/core/storage';
import { textOf, valueOf } from './indexes.js';
import type { Params } from './translate.js';

/** Rows a streamed select reads per query. */
export const STREAM_BATCH = 5000;

/** A row as `select` reads it. */
export interface Row {
  id: string;
  version: string;
  body: string;
  /** A stream ordered by an indexed property: the row's value of it, as text (null: missing). */
  k?: string | null;
}

/** What a stream is ordered by besides id: a typed indexed property, read as its index holds it. */
export interface OrderKey {
  /** The value as text, to carry to the next batch. */
  text: string;
  /** The value compared (the order's expression). */
  value: string;
  /** The text made a value again. */
  parameter(params: Params, text: string): string;
  descending: boolean;
}

/**
 * The order of a stream beside id, or null for none. Only a typed indexed property
 * (translateOrder sorts it by the index expression, missing values first ascending and
 * last descending), whose values compare with plain operators; `undefined` (no order)
 * is the primary key alone.
 */
export function orderKey(order: SelectQuery['order'], params: Params): OrderKey | null | undefined {
  if (order === null) return undefined;
  const p = params.indexedProperty(order.locator);
  if (p?.type === undefined) return null;
  if (p.type === 'string')
    return { text: textOf(p), value: textOf(p), parameter: (ps, t) => `${ps.add(t)} COLLATE "C"`, descending: order.descending };
  return { text: `${valueOf(p)}::text`, value: valueOf(p), parameter: (ps, t) => `(${ps.add(t)})::jsonb`, descending: order.descending };
}

/** Where a descending stream goes once the values run out: the rows without one, from the first id. */
export const NO_VALUE: Row = { id: '0', version: '', body: '', k: null };

/**
 * The rows after `last` in the stream's order (keyset): by id alone, or by the order's
 * value (missing first ascending, last descending), ties by id. Each test is bounded
 * (`>=`, `<=`), so an index on the value starts the scan where the last batch ended.
 */
export function after(key: OrderKey | null | undefined, last: Row, params: Params): string {
  const id = `(${params.add(last.id)})::bigint`;
  if (key === undefined || key === null) return `r.id > ${id}`;
  const v = key.value;
  if (last.k === null || last.k === undefined)
    return key.descending ? `(${v} IS NULL AND r.id > ${id})` : `(${v} IS NOT NULL OR r.id > ${id})`;
  const lk = key.parameter(params, last.k);
  // Descending, the rows without a value come after every value: the caller asks for them once the values run out (NO_VALUE).
  return key.descending ? `(${v} <= ${lk} AND (${v} < ${lk} OR r.id > ${id}))` : `(${v} >= ${lk} AND (${v} > ${lk} OR r.id > ${id}))`;
}

/**
 * A select past one batch (SelectQuery.stream), read as it is consumed: the rows already
 * read, then one query per batch for the rows after the last one read (keyset on the
 * primary key, or on an ordering typed index property and then the key), until a batch comes short or `total`
 * (-1: all) rows were given. Each batch is a query of its own, not a transaction held
 * open for the whole response: a row inserted meanwhile shows when its batch is read
 * after it (ids grow), a row deleted before its batch is read does not, a row updated
 * meanwhile shows as its batch reads it; no row comes twice. Only the current batch is
 * held in memory. A query that fails ends the stream with its error (the service then
 * cuts the response short).
 */
export async function* inBatches(
  first: Row[],
  total: number,
  batch: number,
  next: (after: Row, limit: number) => Promise<Row[]>,
  entity: (row: Row) => Entity,
): AsyncGenerator<Entity> {
  let rows = first;
  let asked = first.length;
  let given = 0;
  for (;;) {
    let last = rows[0];
    for (const row of rows) {
      if (total >= 0 && given >= total) return;
      given++;
      last = row;
      yield entity(row);
    }
    const wanted = total < 0 ? batch : Math.min(batch, total - given);
    if (rows.length < asked || wanted <= 0) return;
    asked = wanted;
    rows = await next(last, wanted);
  }
}
