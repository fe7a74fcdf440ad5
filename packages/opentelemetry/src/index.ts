/**
 * `@resourcery/opentelemetry`: one OpenTelemetry span per client request a Resourcery
 * service answers (docs/operations.md#opentelemetry), through `@opentelemetry/api` alone:
 * the app brings the SDK, its exporter and, for parents across `await`, a context manager.
 */
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import type { HeaderValue, RequestInfo, RequestObserver, ResponseInfo, Service } from '@resourcery/core';

/** The instrumentation scope's name: spans are made by `trace.getTracer(TRACER_NAME)` unless a tracer is given. */
export const TRACER_NAME = '@resourcery/opentelemetry';

export interface TracingOptions {
  /** The tracer spans are started with; default `trace.getTracer('@resourcery/opentelemetry')` of the global provider. */
  tracer?: Tracer;
}

// The methods OpenTelemetry's HTTP conventions know; any other is '_OTHER' (http.request.method_original keeps it).
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE', 'QUERY', 'REPORT']);

/** Reads an incoming `traceparent` (or any propagator's headers) from the request's headers, names in any case. */
const headerGetter: TextMapGetter<Readonly<Record<string, HeaderValue>>> = {
  keys: (headers) => Object.keys(headers),
  get(headers, key) {
    let value = headers[key];
    if (value === undefined) {
      const name = Object.keys(headers).find((k) => k.toLowerCase() === key);
      value = name === undefined ? undefined : headers[name];
    }
    return typeof value === 'number' ? String(value) : value;
  },
};

/**
 * The observer that makes the spans: add it with `service.observe(tracingObserver())` (or
 * use `traceRequests`). Each client request gets a SERVER span, a child of the span active
 * when the request reached the service (the app's HTTP instrumentation) or else of the trace
 * context its headers carry (a `traceparent`, read by the propagator the app registered).
 */
export function tracingObserver(options: TracingOptions = {}): RequestObserver<Span> {
  const tracer = options.tracer ?? trace.getTracer(TRACER_NAME);
  return {
    storageTime: true,
    onRequest(request) {
      const name = KNOWN_METHODS.has(request.method) ? request.method : 'HTTP';
      return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: requestAttributes(request) }, parentOf(request));
    },
    onResponse(response, span) {
      finish(span, response);
    },
  };
}

/** Traces every client request of `service` (see tracingObserver); returns the function that stops it. */
export function traceRequests(service: Service, options: TracingOptions = {}): () => void {
  return service.observe(tracingObserver(options));
}

function parentOf(request: RequestInfo): Context {
  const active = context.active();
  if (trace.getSpan(active) !== undefined) return active;
  return propagation.extract(active, request.headers, headerGetter);
}

function requestAttributes(request: RequestInfo): Attributes {
  const known = KNOWN_METHODS.has(request.method);
  const query = request.uri.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': known ? request.method : '_OTHER',
    'url.path': query < 0 ? request.uri : request.uri.slice(0, query),
  };
  if (!known) attributes['http.request.method_original'] = request.method;
  if (query >= 0) attributes['url.query'] = request.uri.slice(query + 1);
  return attributes;
}

function finish(span: Span, response: ResponseInfo): void {
  const method = KNOWN_METHODS.has(response.method) ? response.method : 'HTTP';
  // Named as the conventions ask, `{method} {target}`, with a target of few values: the declared resource.
  if (response.resource !== undefined) span.updateName(`${method} ${response.resource}`);
  const attributes: Attributes = { 'http.response.status_code': response.status };
  if (response.resource !== undefined) attributes['resourcery.resource'] = response.resource;
  if (response.operationMs !== undefined) attributes['resourcery.operation.duration_ms'] = response.operationMs;
  if (response.storageMs !== undefined) attributes['resourcery.storage.duration_ms'] = response.storageMs;
  if (response.status >= 500) {
    attributes['error.type'] = String(response.status);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.setAttributes(attributes);
  span.end();
}
