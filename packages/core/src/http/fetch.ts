import { normalizeBasePath, stripBasePath } from './base-path.js';
import type { PlainRequest, PlainResponse } from './types.js';

/** Fetch Request -> plain request; the URL's path after basePath is the service URI. */
export function fromFetchRequest(request: Request, basePath = ''): PlainRequest | undefined {
  const url = new URL(request.url);
  // The query string goes along so that the core refuses it (docs/uri.md) rather than it being lost here.
  const uri = stripBasePath(url.pathname + url.search, basePath);
  if (uri === undefined) return undefined;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  // Streamed, so the service's body size limit stops an oversized body early.
  const body = request.body ? (request.body as unknown as AsyncIterable<Uint8Array>) : null;
  return { method: request.method, uri, headers, body, basePath: normalizeBasePath(basePath) };
}

export function toFetchResponse(response: PlainResponse): Response {
  const { body } = response;
  let init: ConstructorParameters<typeof Response>[0] = null;
  if (typeof body === 'string' || body instanceof Uint8Array) init = body as ConstructorParameters<typeof Response>[0];
  else if (body !== null) {
    const iterator = body[Symbol.asyncIterator]();
    init = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(typeof next.value === 'string' ? new TextEncoder().encode(next.value) : next.value);
      },
      async cancel() {
        await iterator.return?.();
      },
    });
  }
  return new Response(init, { status: response.status, headers: response.headers });
}
