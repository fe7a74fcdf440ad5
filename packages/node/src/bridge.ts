import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { normalizeBasePath, Service, stripBasePath, type HandleOptions, type PlainRequest, type PlainResponse } from '@resourcery/core';

export { stripBasePath };

export interface NodeAdapterOptions {
  /** Where the service is mounted; requests outside it get 404 from the listener. */
  basePath?: string;
  /** The app's per-request context (a session, a user), handed to authenticate, rules and hooks. */
  context?: (req: IncomingMessage, res: ServerResponse) => unknown;
}

/**
 * The node:http bridge: the only place that touches IncomingMessage and ServerResponse.
 * `uri` is the raw request target (not decoded), so encoded `&`, `/`, `=` stay data.
 */
export function toPlainRequest(req: IncomingMessage, uri = req.url ?? '/', basePath = '', body?: PlainRequest['body']): PlainRequest {
  return { method: req.method ?? 'GET', uri, headers: req.headers, body: body === undefined ? bodyOf(req) : body, basePath };
}

function bodyOf(req: IncomingMessage): PlainRequest['body'] {
  const length = req.headers['content-length'];
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined)) return null;
  return req;
}

/**
 * The body when a framework's body parser has already read the stream: raw bytes and
 * text as they are, a parsed value as JSON again (Express and Koa adapters).
 */
export function parsedBody(body: unknown): PlainRequest['body'] {
  if (body === undefined) return null;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return JSON.stringify(body);
}

/** Writes a plain response, streaming async bodies with back-pressure; stops if the client leaves. */
export function writeResponse(res: ServerResponse, response: PlainResponse): Promise<void> {
  try {
    return write(res, response) ?? WRITTEN;
  } catch (error) {
    return Promise.reject(error);
  }
}

const WRITTEN = Promise.resolve();

/** Writes the response: undefined when its whole body went out at once, else the streaming of it. */
function write(res: ServerResponse, response: PlainResponse): Promise<void> | undefined {
  return writeWhole(res, response) ? undefined : writeStream(res, response);
}

/** Writes a response whose body is whole (text, bytes or none) at once; false for a streamed body. */
function writeWhole(res: ServerResponse, response: PlainResponse): boolean {
  const { body } = response;
  if (body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) return false;
  res.writeHead(response.status, body === null ? response.headers : withContentLength(response.headers, body));
  res.end(body ?? undefined);
  return true;
}

/**
 * `service.handle`, then the response written. The request goes to the service in the same
 * turn when there is no context to wait for, and a response the service has at once
 * (`service.answer`) is written in that turn too, else a whole body in the turn it comes:
 * each promise hop costs a small GET a measurable part of its time (docs/performance.md).
 * Undefined when the response was written at once; rejects when the library itself failed.
 */
export function serveRequest(service: Service, request: PlainRequest, context: unknown, res: ServerResponse): Promise<void> | undefined {
  let answered: PlainResponse | Promise<PlainResponse>;
  try {
    answered = isThenable(context)
      ? Promise.resolve(context).then((value) => service.handle(request, { context: value }))
      : ask(service, request, context === undefined ? undefined : { context });
    if (!isThenable(answered)) return write(res, answered);
  } catch (error) {
    // Called in the listener's turn: a throw must become the rejection the caller handles.
    return Promise.reject(error);
  }
  return answered.then((response) => write(res, response));
}

/** The service's answer, at once when it has it; a service whose `handle` is replaced (a subclass, a stand-in) is asked through it. */
function ask(service: Service, request: PlainRequest, options: HandleOptions | undefined): PlainResponse | Promise<PlainResponse> {
  return service.handle === Service.prototype.handle ? service.answer(request, options) : service.handle(request, options);
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

async function writeStream(res: ServerResponse, response: PlainResponse): Promise<void> {
  const body = response.body as AsyncIterable<Uint8Array | string>;
  res.writeHead(response.status, response.headers);
  const iterator = body[Symbol.asyncIterator]();
  // A client that left while the answer was made is gone already: its 'close' has passed.
  let closed = res.destroyed;
  const onClose = () => {
    closed = true;
    // Told at once, not at its next chunk: an event stream may wait minutes for one.
    iterator.return?.()?.catch(() => undefined);
  };
  res.once('close', onClose);
  try {
    while (!closed) {
      const next = await iterator.next();
      if (next.done) break;
      if (!res.write(next.value) && !closed) await drained(res);
    }
    if (closed) await iterator.return?.();
    else res.end();
  } catch (error) {
    // Headers are gone already: the only honest signal left is a broken response.
    res.destroy(error as Error);
    await iterator.return?.().catch(() => undefined);
  } finally {
    res.off('close', onClose);
  }
}

/**
 * The headers plus Content-Length, as the flat list of names and values `writeHead` also
 * takes: on Node 20 a spread followed by a new key (`{ ...headers, 'content-length': n }`)
 * takes a slow path that cost about 3 µs of CPU a response in a busy server, and a list
 * is cheaper for writeHead than a copied object (docs/performance.md, Optimisations).
 */
function withContentLength(headers: Record<string, string>, body: string | Uint8Array): Array<string | number> {
  const out: Array<string | number> = [];
  for (const name in headers) if (name !== 'content-length') out.push(name, headers[name]);
  out.push('content-length', typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  return out;
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** A request listener for `http.createServer`. */
export function createNodeListener(service: Service, options: NodeAdapterOptions = {}): NodeListener {
  const basePath = normalizeBasePath(options.basePath);
  return (req, res) => {
    const uri = stripBasePath(req.url ?? '/', basePath);
    if (uri === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    let context: unknown;
    try {
      context = options.context?.(req, res);
    } catch (error) {
      // The app's own failure, in the listener's turn: a 500 for this request, not an uncaught exception.
      failed(res, error);
      return;
    }
    serveRequest(service, toPlainRequest(req, uri, basePath), context, res)?.catch((error) => failed(res, error));
  };
}

/** A failure outside the service (the library's, the context option's): 500, or a cut body once the headers went out. */
function failed(res: ServerResponse, error: unknown): void {
  if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
  else res.destroy(error as Error);
}

/** An http.Server serving the service (call `.listen(port)`). */
export function createServer(service: Service, options: NodeAdapterOptions = {}): Server {
  return createHttpServer(createNodeListener(service, options));
}
