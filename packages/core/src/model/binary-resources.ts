// Binary resources (docs/binary-resources.md): bytes an app makes on request, such as a
// report as PDF or a chart as PNG, served at a resource URI beside the entity resources.
import { ServiceError } from '../errors.js';
import type { Condition } from '../grammar/parse.js';
import type { BodyChunk } from '../http/types.js';
import type { Caller } from './caller.js';
import type { Method } from '../http/types.js';

/** What a binary resource's reader is asked: the request's conditions, and who asks. */
export interface BinaryRequest {
  /** The resource's name as declared. */
  resource: string;
  method: 'GET' | 'HEAD';
  /** The URI as the client sent it (after the service's base path). */
  uri: string;
  /** The conditions in the URI, in order (`/Report.Pdf/Month=2026-11&Pages<=3`). */
  conditions: readonly BinaryCondition[];
  /** The `=` conditions by property, as written (`{ Month: '2026-11' }`); the last one wins. */
  params: Readonly<Record<string, string | null>>;
  /** The request's headers, lower-case names. */
  headers: Readonly<Record<string, string>>;
}

export interface BinaryCondition {
  property: string;
  operator: string;
  /** The value as written, percent-decoded and unquoted; null for `null`. */
  value: string | null;
}

/** Bytes, text (sent as UTF-8), or a stream of them (a Node Readable, a web ReadableStream, an async generator). */
export type BinaryBody = Uint8Array | ArrayBuffer | string | AsyncIterable<Uint8Array | string> | ReadableStream<Uint8Array>;

/** A reader's answer with its own content type (default: the resource's) and version (an ETag). */
export interface BinaryContent {
  body: BinaryBody;
  contentType?: string;
  /** The version of these bytes: sent as a strong ETag; If-None-Match naming it is answered 304. */
  version?: string;
}

/** A reader's answer: the body, the body with its type and version, or nothing (204). */
export type BinaryAnswer = BinaryBody | BinaryContent | null | undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context and principal
export interface BinaryResourceDefinition<C = any, P = any> {
  name: string;
  description?: string;
  /** The content type of what `read` returns (`application/pdf`); `Accept` does not change it. */
  contentType: string;
  /**
   * Makes the bytes of one request. Throw a ServiceError to refuse it (`NotFound`,
   * `InvalidConditionValueType`...); any other error is a 500.
   */
  read(request: BinaryRequest, caller: Caller<C, P>): BinaryAnswer | Promise<BinaryAnswer>;
  /** Who may read it (GET and HEAD), as for entity resources. */
  rules?: { allow?: (caller: Caller<C, P>, method: Method) => boolean };
}

/** The methods a binary resource answers; the others are 405 with `Allow: GET, HEAD`. */
export const BINARY_METHODS: readonly Method[] = ['GET', 'HEAD'];

/** Refuses a definition without a reader or a content type, when it is declared. */
export function checkBinaryDefinition(definition: BinaryResourceDefinition): void {
  if (typeof definition.read !== 'function') throw new Error(`Binary resource '${definition.name}' needs a read function`);
  if (typeof definition.contentType !== 'string' || !/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/.test(definition.contentType))
    throw new Error(`Binary resource '${definition.name}' needs a contentType such as 'application/pdf'`);
}

/** The request a reader gets, from the parsed conditions. */
export function binaryRequest(
  resource: string,
  method: 'GET' | 'HEAD',
  uri: string,
  conditions: readonly Condition[],
  headers: Record<string, string>,
): BinaryRequest {
  const list: BinaryCondition[] = conditions.map((c) => ({ property: c.locator.text, operator: c.op, value: literalText(c) }));
  const params: Record<string, string | null> = {};
  for (const c of list) if (c.operator === '=') params[c.property] = c.value;
  return { resource, method, uri, conditions: list, params, headers };
}

function literalText(c: Condition): string | null {
  const v = c.value;
  return v.kind === 'null' ? null : v.kind === 'string' ? v.value : v.text;
}

/** A reader's answer made plain: bytes or a stream of chunks, its content type and version. */
export interface ReadBinary {
  body: Uint8Array | string | AsyncIterable<BodyChunk>;
  contentType: string;
  version?: string;
  /** Lets go of a stream that will not be sent (HEAD, 304): closes the app's source. */
  discard(): Promise<void>;
}

/** Runs the reader and checks what it gave; null when it gave nothing. */
export async function readBinary(definition: BinaryResourceDefinition, request: BinaryRequest, caller: Caller): Promise<ReadBinary | null> {
  const answer = await definition.read(request, caller);
  if (answer === null || answer === undefined) return null;
  const content: BinaryContent = isContent(answer) ? answer : { body: answer };
  const contentType = content.contentType ?? definition.contentType;
  if (typeof contentType !== 'string' || contentType === '' || /[\r\n]/.test(contentType))
    throw new Error(`The reader of '${definition.name}' gave an invalid content type`);
  const version = content.version;
  if (version !== undefined && (typeof version !== 'string' || /["\r\n]/.test(version)))
    throw new Error(`The reader of '${definition.name}' gave a version that is not a string without quotes`);
  return { body: plainBody(definition.name, content.body), contentType, version, discard: () => discard(content.body) };
}

async function discard(body: BinaryBody): Promise<void> {
  if (typeof body !== 'object' || body instanceof Uint8Array || body instanceof ArrayBuffer) return;
  try {
    const source = body as { destroy?: () => void; cancel?: () => Promise<void> } & Partial<AsyncIterable<unknown>>;
    if (typeof source.destroy === 'function') source.destroy();
    else if (typeof source.cancel === 'function') await source.cancel();
    else {
      const iterate = source[Symbol.asyncIterator];
      if (typeof iterate === 'function') await iterate.call(source).return?.();
    }
  } catch {
    // A source that fails to close has nothing more to give: the answer stands.
  }
}

function isContent(answer: BinaryBody | BinaryContent): answer is BinaryContent {
  return typeof answer === 'object' && !(answer instanceof Uint8Array) && !(answer instanceof ArrayBuffer) && 'body' in answer;
}

function plainBody(name: string, body: BinaryBody): Uint8Array | string | AsyncIterable<BodyChunk> {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body !== null && typeof body === 'object') {
    if (Symbol.asyncIterator in body) return chunks(body as AsyncIterable<unknown>, name);
    if (typeof (body as ReadableStream<Uint8Array>).getReader === 'function') return fromReader(body as ReadableStream<Uint8Array>, name);
  }
  throw new Error(`The reader of '${name}' gave a body that is neither bytes, text nor a stream`);
}

/** The stream's chunks, each checked to be bytes or text; closing it early closes the source. */
async function* chunks(source: AsyncIterable<unknown>, name: string): AsyncGenerator<BodyChunk> {
  for await (const chunk of source) yield checked(chunk, name);
}

async function* fromReader(stream: ReadableStream<Uint8Array>, name: string): AsyncGenerator<BodyChunk> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      yield checked(next.value, name);
    }
  } finally {
    // Cancels the source when the client went away before the end.
    await reader.cancel().catch(() => undefined);
  }
}

function checked(chunk: unknown, name: string): BodyChunk {
  if (typeof chunk === 'string' || chunk instanceof Uint8Array) return chunk;
  throw new ServiceError('Unknown', `The stream of '${name}' gave a chunk that is neither bytes nor text`);
}
