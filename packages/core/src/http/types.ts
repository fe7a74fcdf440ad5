/** The one contract between adapters and the core: plain objects, no framework types. */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'REPORT' | 'HEAD';
export const METHODS: readonly Method[] = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'REPORT', 'HEAD'];

export type HeaderValue = string | string[] | number | undefined;
export type BodyChunk = string | Uint8Array;

export interface PlainRequest {
  method: string;
  /** Path after the mount path, e.g. `/Person/Age>30/limit=10` (a query string, if any, is refused with 400). */
  uri: string;
  /** Header names in any case. */
  headers?: Record<string, HeaderValue>;
  /** Raw body bytes, text, a stream of chunks, or nothing. */
  body?: BodyChunk | AsyncIterable<BodyChunk> | null;
  /** Where the service is mounted (`/api`), used in links such as ErrorInfo. */
  basePath?: string;
}

export interface PlainResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** null for no body; an async iterable streams the body. */
  body: BodyChunk | AsyncIterable<BodyChunk> | null;
}
