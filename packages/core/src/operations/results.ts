import type { Entity } from '../query/conditions.js';

/** What an operation produced, before a content type writes it. */
export type Result =
  /**
   * GET: the selected entities. `version`
   * (here and on a change of one entity): the stored entity's version, for an ETag.
   * `total` (with `count=true`): how many the GET selects before offset and limit.
   * `state`: the stamp of the one entity when it is answered as stored and its stamp
   * lasts as long as that state (Stamp.text): its JSON text may be kept under it.
   */
  | { kind: 'entities'; entities: Entity[]; version?: string; total?: number; state?: object }
  /**
   * GET past what the storage holds in memory (SelectQuery.stream): at least one entity,
   * read as the body is written. Only for content types with `streams`.
   */
  | { kind: 'stream'; entities: AsyncIterable<Entity>; total?: number }
  /** REPORT: how many entities the GET would select. */
  | { kind: 'count'; count: number }
  /** POST, PUT, PATCH, DELETE. */
  | { kind: 'change'; data: Entity[]; inserted?: number; updated?: number; deleted?: number; version?: string }
  /** A body produced elsewhere and passed through as-is (e.g. a Destination's answer). */
  | { kind: 'passthrough'; status: number; headers: Record<string, string>; body: Uint8Array | string | null };

/** The JSON error body of docs/errors.md (key order as shown there). */
export interface ErrorBody {
  Status: 'fail';
  ErrorType: string;
  ErrorCode: string;
  Message: string;
  Data?: unknown;
  MoreInfoAt?: string;
  TimeStamp: string;
  Uri: string;
  TimeElapsedMs: number;
}
