import { isUtf8 } from 'node:buffer';
import { ServiceError } from '../errors.js';
import { normalizeBasePath } from '../http/base-path.js';
import { nextTurn } from '../util/turn.js';
import { TYPED_URI_HEADER, typedUri } from '../http/typed-uri.js';
import { Origin } from '../outgoing/origin.js';
import { RECORD_PREFIX_BYTES, RECORD_WHOLE_BODY_BYTES, type RecordBody } from '../model/redaction.js';
import type { Resource } from '../model/resources.js';
import type { RequestTrace } from '../http/observer.js';
import type { HeaderValue, PlainRequest } from '../http/types.js';

export type Headers = Record<string, string>;

/**
 * Lower-cases header names and joins repeated values, as HTTP allows. Headers that are so
 * already (node:http's `req.headers`) are used as they are: copying them was a fixed cost
 * of every request. They are only read, never changed (a macro replaces them).
 */
function normalizeHeaders(headers: Record<string, HeaderValue> | undefined): Headers {
  if (!headers) return {};
  if (normalized(headers)) return headers as Headers;
  const out: Headers = {};
  for (const name in headers) {
    const v = headers[name];
    if (v === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

function normalized(headers: Record<string, HeaderValue>): boolean {
  for (const name in headers) {
    if (typeof headers[name] !== 'string' || !lowerCase(name)) return false;
  }
  return true;
}

/**
 * Whether `name` has no character from `from` to `to` (ASCII letters of one case), or
 * undefined when it has one past ASCII before any: a case mapping decides then. HTTP's
 * names and methods are ASCII, so the usual answer makes no case-mapped copy of the name
 * (it cost a small GET one copy per header, and about 0.08 µs for its method).
 */
function asciiFree(name: string, from: number, to: number): boolean | undefined {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= from && c <= to) return false;
    if (c > 0x7f) return undefined;
  }
  return true;
}

/** `name.toLowerCase() === name`. */
function lowerCase(name: string): boolean {
  return asciiFree(name, 0x41, 0x5a) ?? name.toLowerCase() === name;
}

/** `name.toUpperCase() === name`. */
function upperCase(name: string): boolean {
  return asciiFree(name, 0x61, 0x7a) ?? name.toUpperCase() === name;
}

/** One request as it moves through the pipeline. */
export class RequestContext {
  readonly started = performance.now();
  /** When the request arrived, made only when asked: reading the clock costs a request about 0.1 µs here. */
  private date: Date | undefined;
  readonly method: string;
  readonly uri: string;
  readonly basePath: string;
  /** Headers after macro rewriting; lower-case names. */
  headers: Headers;
  /** The headers as the client sent them (for error records). */
  readonly clientHeaders: Headers;
  resource: Resource | null = null;
  /** Set while observers watch this request (docs/operations.md): the resource and operation time go there. */
  trace: RequestTrace | undefined = undefined;
  /** Set when a macro supplied the body. */
  private replacedBody: Uint8Array | null | undefined;
  private bodyBytes: Uint8Array | null | undefined;
  private readonly rawBody: PlainRequest['body'];
  /** How deep in local requests (webhooks, Source, macros) this request is. */
  readonly depth: number;

  /** Who is calling, once authenticated (hooks and rules see it). */
  principal: unknown = undefined;
  /** Made when first asked for: most requests cause nothing. */
  private originValue: Origin | undefined;

  /** `context`: the app's per-request context (adapter option or `service.handle`). */
  constructor(
    request: PlainRequest,
    readonly maxBodyBytes: number,
    depth = 0,
    readonly context: unknown = undefined,
    origin?: Origin,
  ) {
    this.method = upperCase(request.method) ? request.method : request.method.toUpperCase();
    this.basePath = normalizeBasePath(request.basePath);
    this.clientHeaders = normalizeHeaders(request.headers);
    this.uri = typedUri(request.uri || '/', this.clientHeaders[TYPED_URI_HEADER]);
    this.headers = this.clientHeaders;
    this.rawBody = request.body;
    this.depth = depth;
    this.originValue = origin;
  }

  /** The client request this one descends from (itself, for a client request): what it causes counts against one bound. */
  get origin(): Origin {
    return (this.originValue ??= new Origin());
  }

  /**
   * When the request arrived (error records, file names): the clock now, less the whole
   * milliseconds since `started`. That is the clock's reading at arrival or the next
   * millisecond, never before a reading taken before the request or after one taken later.
   */
  get time(): Date {
    return (this.date ??= new Date(Date.now() - Math.floor(performance.now() - this.started)));
  }

  elapsedMs(): number {
    return Math.round((performance.now() - this.started) * 1000) / 1000;
  }

  header(name: string): string | undefined {
    return this.headers[name];
  }

  replaceBody(body: Uint8Array | null): void {
    this.replacedBody = body;
  }

  /** The request body (bounded by maxBodyBytes), or null when there is none. */
  async body(drain = false): Promise<Uint8Array | null> {
    if (this.replacedBody !== undefined) return this.replacedBody;
    if (this.bodyBytes === undefined) this.bodyBytes = await readAll(this.rawBody, this.maxBodyBytes, drain);
    return this.bodyBytes;
  }

  /**
   * The client's body as text for error records (binary bodies described); never throws.
   * Past RECORD_WHOLE_BODY_BYTES only its first RECORD_PREFIX_BYTES are decoded, with the size:
   * the record keeps 16 KiB of it.
   */
  async bodyForRecord(): Promise<RecordBody> {
    try {
      // A body the request never read (a GET's) and that is past maxBodyBytes is not read to
      // record it: reading stops past the limit and breaks the connection, and a second
      // request on it was lost (issue 24). Node reads it off the connection after the answer.
      const declared = Number(this.clientHeaders['content-length']);
      if (this.bodyBytes === undefined && this.replacedBody === undefined && declared > this.maxBodyBytes)
        return { text: `<${declared} bytes, more than the limit of ${this.maxBodyBytes}: not read>` };
      const bytes = this.bodyBytes !== undefined ? this.bodyBytes : await this.body(true);
      if (!bytes || bytes.length === 0) return { text: '' };
      // A spreadsheet or other binary upload is described, not dumped as mojibake.
      if (!isUtf8(bytes) || bytes.subarray(0, 512).includes(0))
        return { text: `<${bytes.length} bytes of binary data (${this.clientHeaders['content-type'] ?? 'no Content-Type'})>` };
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
      if (bytes.length <= RECORD_WHOLE_BODY_BYTES) return { text: buffer.toString('utf8') };
      return { text: buffer.toString('utf8', 0, RECORD_PREFIX_BYTES), bytes: bytes.length };
    } catch {
      return { text: '' };
    }
  }
}

/**
 * The whole body, at most `max` bytes (413 past it). Past the limit reading stops, which
 * ends the body's stream and, over HTTP, the connection; `drain`: the rest is read and
 * dropped instead, so the connection stays usable (an error record's read of a body no
 * operation needed, sent without a Content-Length).
 */
async function readAll(body: PlainRequest['body'], max: number, drain = false): Promise<Uint8Array | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return checkSize(Buffer.from(body), max);
  if (body instanceof Uint8Array) return checkSize(body, max);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      size += buf.length;
      if (size > max && !drain) throw tooLarge(max);
      if (size <= max) chunks.push(buf);
    }
    if (size > max) throw tooLarge(max);
  } catch (e) {
    if (ServiceError.is(e)) throw e;
    // The client went away mid-body (or the stream broke): a client-side failure, not a 500.
    throw new ServiceError('NoDataSource', `The request body ended early: ${(e as Error).message}`);
  }
  if (size === 0) return null;
  return size <= JOIN_BYTES ? Buffer.concat(chunks, size) : joinInSlices(chunks, size);
}

/** Bodies of more bytes are joined JOIN_BYTES at a time, a turn between (docs/limits.md#large-work). */
const JOIN_BYTES = 1024 * 1024;

/** The chunks in one buffer: a copy of megabytes (and the page faults of new memory) spread over turns. */
async function joinInSlices(chunks: readonly Buffer[], size: number): Promise<Buffer> {
  const whole = Buffer.allocUnsafe(size);
  let at = 0;
  let sinceTurn = 0;
  for (const chunk of chunks) {
    if (sinceTurn >= JOIN_BYTES) {
      await nextTurn();
      sinceTurn = 0;
    }
    whole.set(chunk, at);
    at += chunk.length;
    sinceTurn += chunk.length;
  }
  return whole;
}

function checkSize(bytes: Uint8Array, max: number): Uint8Array | null {
  if (bytes.length > max) throw tooLarge(max);
  return bytes.length === 0 ? null : bytes;
}

function tooLarge(max: number): ServiceError {
  return new ServiceError('PayloadTooLarge', `The request body is larger than the limit of ${max} bytes`);
}
