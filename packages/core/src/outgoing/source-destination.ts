import { redactInline } from '../model/redaction.js';
import { ServiceError, type ErrorCode } from '../errors.js';
import type { Origin } from './origin.js';
import { METHODS, type PlainResponse } from '../http/types.js';
import type { Entity } from '../query/conditions.js';
import type { Result } from '../operations/results.js';
import type { LocalRequests, OutgoingPolicy } from './local-requests.js';
import type { Protocols } from '../content-types/protocols.js';
import { isAbsolute } from './guard.js';
import { send, SendFailure } from './send.js';
import { collectBody, headerValue, serializeEntities } from './body.js';

/**
 * The `Source` and `Destination` request headers (docs/methods.md):
 * `Source: GET <uri> [Header: value]...` gives a POST, PUT or PATCH its body from that
 * GET; `Destination: <METHOD> <uri> [Header: value]...` sends a GET's result there and
 * answers with the destination's answer. `<uri>` is local (`/Person/...`, run
 * in-process) or an absolute http(s) URL (behind the SSRF guard).
 */
export interface HeaderRequest {
  method: string;
  uri: string;
  /** Lower-case names. */
  headers: Record<string, string>;
}

/** What Source and Destination requests are made with (service.ts wires it). */
export interface HeaderRequestDeps {
  readonly protocols: Protocols;
  readonly local: LocalRequests;
  readonly outgoing: OutgoingPolicy;
  /** Largest body read from an answer (service option maxBodyBytes). */
  readonly maxBodyBytes: number;
}

type Which = 'Source' | 'Destination';
const CODE: Record<Which, ErrorCode> = { Source: 'InvalidSource', Destination: 'InvalidDestination' };
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";

function fail(which: Which, message: string, code: ErrorCode = CODE[which]): never {
  // Messages quote the header; credentials written in it stay out of responses and records.
  throw new ServiceError(code, `${which}: ${redactInline(message)}`);
}

/** Reads `<METHOD> <uri>` and its headers, written `[Name: value]` (or plain `Name: value`). */
export function parseHeaderRequest(value: string, which: Which): HeaderRequest {
  const match = /^\s*([A-Za-z]+)\s+(\S+)\s*(.*?)\s*$/s.exec(value);
  if (!match) fail(which, `'${value}' does not have the form <METHOD> <uri> [Header: value]...`);
  const method = match[1].toUpperCase();
  if (!(METHODS as readonly string[]).includes(method)) fail(which, `'${match[1]}' is not a method`);
  return { method, uri: match[2], headers: parseHeaders(match[3], which) };
}

function parseHeaders(text: string, which: Which): Record<string, string> {
  const headers: Record<string, string> = {};
  if (text === '') return headers;
  const bracketed = new RegExp(`\\[\\s*(${TOKEN})\\s*:\\s*([^\\]]*)\\]\\s*`, 'y');
  const plain = new RegExp(`(?:^|\\s)(${TOKEN}):(?:\\s+|$)`, 'g');
  if (text.startsWith('[')) {
    let m: RegExpExecArray | null;
    let end = 0;
    while ((m = bracketed.exec(text)) !== null) {
      headers[m[1].toLowerCase()] = m[2].trim();
      end = bracketed.lastIndex;
    }
    if (end !== text.length) fail(which, `cannot read the headers '${text}'; write each as [Name: value]`);
  } else {
    // Plain `Name: value` pairs: a header starts where a token and ': ' follow a space.
    const starts = [...text.matchAll(plain)];
    if (starts.length === 0 || starts[0].index !== 0) fail(which, `cannot read the headers '${text}'; write each as [Name: value]`);
    starts.forEach((m, i) => {
      const from = m.index + m[0].length;
      const to = i + 1 < starts.length ? starts[i + 1].index : text.length;
      headers[m[1].toLowerCase()] = text.slice(from, to).trim();
    });
  }
  for (const [name, v] of Object.entries(headers)) if (/[\r\n\0]/.test(v)) fail(which, `the header '${name}' holds a line break`);
  return headers;
}

/** The answer of a header request, its body read up to the service's body limit. */
interface Answer {
  status: number;
  contentType: string | undefined;
  /** The answer's headers that a Destination's caller needs (PASSED_ON), lower-case names. */
  passed: Record<string, string>;
  body: Buffer;
}

/** Headers of a Destination's answer given to the caller with its status and body: where to find an error record, a redirect's target. */
const PASSED_ON = ['errorinfo', 'location', 'retry-after'];

function passedOn(get: (name: string) => string | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PASSED_ON) {
    const value = get(name);
    if (value !== undefined && value !== null) out[name] = value;
  }
  return out;
}

/** The request whose Source or Destination header is followed (request/context.ts's RequestContext is one). */
export interface CallingRequest {
  header(name: string): string | undefined;
  readonly basePath: string;
  readonly depth: number;
  readonly context: unknown;
  readonly origin: Origin;
}

async function run(
  deps: HeaderRequestDeps,
  ctx: CallingRequest,
  which: Which,
  request: HeaderRequest,
  body: Buffer | null,
): Promise<Answer> {
  const limit = deps.maxBodyBytes;
  if (request.uri.startsWith('/')) {
    const headers = { ...request.headers };
    // The caller's own key: a local Source or Destination acts with the caller's rights.
    const authorization = ctx.header('authorization');
    if (headers.authorization === undefined && authorization !== undefined) headers.authorization = authorization;
    const response: PlainResponse = await deps.local.handle(
      { method: request.method, uri: request.uri, headers, body, basePath: ctx.basePath },
      ctx.depth + 1,
      ctx.context,
      ctx.origin,
    );
    try {
      return {
        status: response.status,
        contentType: response.headers['content-type'],
        passed: passedOn((n) => response.headers[n]),
        body: await collectBody(response.body, limit),
      };
    } catch (e) {
      return fail(which, (e as Error).message, which === 'Source' ? 'InvalidSourceData' : 'InvalidDestination');
    }
  }
  if (!isAbsolute(request.uri)) fail(which, `'${request.uri}' is neither a local URI (/Resource/...) nor an absolute URL`);
  let url: URL;
  try {
    url = new URL(request.uri);
  } catch {
    return fail(which, `'${request.uri}' is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(which, `'${request.uri}' must use http or https`);
  if (url.username || url.password) fail(which, 'the URL may not hold credentials: pass an Authorization header instead');
  const policy = { allowPrivate: deps.outgoing.allowPrivate, timeoutMs: deps.outgoing.timeoutMs };
  try {
    return await send(url, { method: request.method, headers: request.headers, body }, policy, async (response) => {
      const length = Number(response.headers.get('content-length') ?? 0);
      if (length > limit) {
        await response.body?.cancel().catch(() => undefined);
        fail(
          which,
          `the answer of ${request.uri} is larger than ${limit} bytes`,
          which === 'Source' ? 'InvalidSourceData' : 'InvalidDestination',
        );
      }
      return {
        status: response.status,
        contentType: response.headers.get('content-type') ?? undefined,
        passed: passedOn((n) => response.headers.get(n)),
        body: await collectBody(response.body, limit),
      };
    });
  } catch (e) {
    if (!(e instanceof SendFailure)) throw e;
    if (e.kind === 'refused') return fail(which, `${request.uri} is refused: ${e.detail}`);
    if (e.kind === 'timeout') return fail(which, `no answer from ${request.uri} within ${e.detail}`);
    return fail(which, e.kind === 'unresolved' ? e.detail : `cannot reach ${request.uri}: ${e.detail}`);
  }
}

/** The entities of a POST, PUT or PATCH whose request names a Source. */
export async function readSource(deps: HeaderRequestDeps, ctx: CallingRequest, value: string): Promise<Entity[]> {
  const request = parseHeaderRequest(value, 'Source');
  if (request.method !== 'GET') fail('Source', `the source request must be a GET, not ${request.method}`);
  request.headers.accept ??= 'application/json;raw=true';
  const answer = await run(deps, ctx, 'Source', request, null);
  if (answer.status >= 300) {
    fail('Source', `GET ${request.uri} answered ${answer.status}: ${answer.body.toString('utf8').slice(0, 300)}`);
  }
  if (answer.status === 204 || answer.body.length === 0) return [];
  let negotiated;
  try {
    negotiated = deps.protocols.forContentType(answer.contentType);
  } catch (e) {
    return fail('Source', `GET ${request.uri} gave data that cannot be read: ${(e as Error).message}`, 'InvalidSourceData');
  }
  try {
    return await negotiated.contentType.read!(answer.body, { params: negotiated.params });
  } catch (e) {
    return fail('Source', `GET ${request.uri} gave data that cannot be read: ${(e as Error).message}`, 'InvalidSourceData');
  }
}

/** Sends a GET's entities to the request's Destination; the result is the destination's answer. */
export async function sendToDestination(deps: HeaderRequestDeps, ctx: CallingRequest, result: Result, value: string): Promise<Result> {
  const request = parseHeaderRequest(value, 'Destination');
  const entities = result.kind === 'entities' ? result.entities : result.kind === 'change' ? result.data : [];
  let body: Buffer | null = null;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    let serialized;
    try {
      serialized = await serializeEntities(deps.protocols, entities, headerValue(request.headers, 'content-type'));
    } catch (e) {
      return fail('Destination', (e as Error).message);
    }
    body = serialized.body;
    request.headers['content-type'] = serialized.contentType;
  }
  const answer = await run(deps, ctx, 'Destination', request, body);
  const headers: Record<string, string> = { ...answer.passed };
  if (answer.contentType !== undefined && answer.body.length > 0) headers['content-type'] = answer.contentType;
  return { kind: 'passthrough', status: answer.status, headers, body: answer.body.length > 0 ? answer.body : null };
}
