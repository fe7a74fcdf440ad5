/** The entity and write-result types of both clients, the untyped (index.ts) and the typed (typed.ts). */

export type Entity = Record<string, unknown>;

export interface WriteResult<T> {
  status: number;
  /** The written entities (POST, PUT, PATCH); empty for DELETE. */
  data: T[];
  inserted: number;
  updated: number;
  deleted: number;
  etag?: string;
}

export interface WriteOptions {
  /** Only write if the entity still has this ETag (412 PreconditionFailed otherwise). */
  ifMatch?: string;
}
