import type { Entity } from '../query/conditions.js';
import type { Result } from '../operations/results.js';
import type { BodyChunk } from '../http/types.js';

/** What a content type gets to write a result. */
export interface WriteContext {
  /** Media-type parameters of the chosen Accept entry, lower-case names (e.g. raw). */
  params: Record<string, string>;
  /** Milliseconds since the request started, read when the body is written. */
  elapsedMs(): number;
}

/** What a content type gets to read a request body. */
export interface ReadContext {
  params: Record<string, string>;
}

/**
 * A content type plug-in (docs/content-types.md ContentTypeInfo). `read` turns a body into entities;
 * `write` turns a result into a body. Omit either to make the type write- or read-only.
 */
export interface ContentType {
  name: string;
  mimeType: string;
  /** Header values that select this type (matched case-insensitively, without parameters). */
  bindings: string[];
  /** File extension: when set, output is a file download (Content-Disposition). */
  extension?: string;
  read?(body: Uint8Array, context: ReadContext): Entity[] | Promise<Entity[]>;
  write?(result: Result, context: WriteContext): BodyChunk | AsyncIterable<BodyChunk>;
  /**
   * write() takes a 'stream' result (a GET's entities, read as they are written): a GET
   * answered in this type may then stream past what the storage holds in memory.
   */
  streams?: boolean;
  /**
   * Gets ready to write (e.g. loads a module on first use) before a request answered in
   * this type runs: undefined when ready, else a promise that settles when it is, or
   * rejects with a ServiceError (a 406 naming a missing package) when it cannot be.
   */
  prepare?(): Promise<void> | undefined;
}

/** A protocol provider: a named set of content types (docs/content-types.md Protocol). */
export interface ProtocolProvider {
  name: string;
  identifier: string;
  contentTypes: ContentType[];
}
