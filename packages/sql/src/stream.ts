import type { Entity } from '@resourcery/core/storage';

/** Rows a streamed select reads per query. */
export const STREAM_BATCH = 5000;

/** A row as `select` reads it. */
export interface Row {
  id: string;
  version: string;
  body: string;
}

/**
 * A select past one batch (SelectQuery.stream), read as it is consumed: the rows already
 * read, then one query per batch for the rows after the last id read (keyset on the
 * primary key; the stream has no other order), until a batch comes short or `total`
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
  next: (after: string, limit: number) => Promise<Row[]>,
  entity: (row: Row) => Entity,
): AsyncGenerator<Entity> {
  let rows = first;
  let asked = first.length;
  let given = 0;
  for (;;) {
    let last = '';
    for (const row of rows) {
      if (total >= 0 && given >= total) return;
      given++;
      last = row.id;
      yield entity(row);
    }
    const wanted = total < 0 ? batch : Math.min(batch, total - given);
    if (rows.length < asked || wanted <= 0) return;
    asked = wanted;
    rows = await next(last, wanted);
  }
}
