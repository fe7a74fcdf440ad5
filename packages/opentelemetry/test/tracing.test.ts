import type { AddressInfo } from 'node:net';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createService, MemoryStorage, type Service, type Storage } from '@resourcery/core';
import type { SelectQuery, WriteBatch } from '@resourcery/core/storage';
import { createServer } from '@resourcery/node';
import { traceRequests, tracingObserver, TRACER_NAME } from '@resourcery/opentelemetry';

/** Spans of requests, read back from the SDK's in-memory exporter (docs/operations.md#opentelemetry). */

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

const services: Service[] = [];
afterEach(async () => {
  exporter.reset();
  for (const s of services.splice(0)) await s.close();
});

const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A memory storage whose every call takes at least 20 ms; `fail` makes select throw. */
class SlowStorage implements Storage {
  private readonly inner = new MemoryStorage();
  fail = false;
  async select(query: SelectQuery) {
    await wait(20);
    if (this.fail) throw new Error('disk on fire');
    return this.inner.select(query);
  }
  async write(batch: WriteBatch) {
    await wait(20);
    return this.inner.write(batch);
  }
}

function traced(): { service: Service; storage: SlowStorage } {
  const storage = new SlowStorage();
  const service = createService();
  services.push(service);
  service.addResource({ name: 'Person', key: 'Id', storage });
  traceRequests(service);
  return { service, storage };
}

const ms = (span: ReadableSpan) => span.duration[0] * 1000 + span.duration[1] / 1e6;
const json = { 'content-type': 'application/json', accept: 'application/json;raw=true' };

function only(): ReadableSpan {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(1);
  exporter.reset();
  return spans[0];
}

describe('one span per request', () => {
  test('a POST and a GET: SERVER spans named for the resource, HTTP attributes, storage time within the span', async () => {
    const { service } = traced();
    expect((await service.handle({ method: 'POST', uri: '/Person', headers: json, body: '[{"Id":1,"Name":"ann"}]' })).status).toBe(201);
    const post = only();
    expect(post.name).toBe('POST Person');
    expect(post.kind).toBe(SpanKind.SERVER);
    expect(post.instrumentationScope.name).toBe(TRACER_NAME);
    expect(post.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/Person',
      'http.response.status_code': 201,
      'resourcery.resource': 'Person',
    });
    expect(post.status.code).toBe(SpanStatusCode.UNSET);

    expect((await service.handle({ method: 'GET', uri: '/Person/Id=1', headers: json })).status).toBe(200);
    const get = only();
    expect(get.name).toBe('GET Person');
    expect(get.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/Person/Id=1',
      'http.response.status_code': 200,
      'resourcery.resource': 'Person',
    });
    for (const span of [post, get]) {
      const storage = span.attributes['resourcery.storage.duration_ms'] as number;
      const operation = span.attributes['resourcery.operation.duration_ms'] as number;
      // Each storage call waits at least 20 ms (a timer may fire a millisecond early).
      expect(storage).toBeGreaterThanOrEqual(19);
      expect(storage).toBeLessThanOrEqual(operation);
      expect(storage).toBeLessThanOrEqual(ms(span));
    }
  });

  test('a 404 for an unknown resource and a 400: no error status, the status code set', async () => {
    const { service } = traced();
    expect((await service.handle({ method: 'GET', uri: '/Nobody', headers: json })).status).toBe(404);
    const unknown = only();
    expect(unknown.name).toBe('GET');
    expect(unknown.attributes['http.response.status_code']).toBe(404);
    expect(unknown.attributes['resourcery.resource']).toBeUndefined();
    expect(unknown.attributes['resourcery.storage.duration_ms']).toBe(0);
    expect(unknown.status.code).toBe(SpanStatusCode.UNSET);
    expect((await service.handle({ method: 'GET', uri: '/Person/_/limit=many', headers: json })).status).toBe(400);
    const bad = only();
    expect([bad.name, bad.attributes['http.response.status_code'], bad.status.code]).toEqual(['GET Person', 400, SpanStatusCode.UNSET]);
    // A query string (which the URI language does not take: 400) goes to url.query.
    expect((await service.handle({ method: 'GET', uri: '/Person?x=1', headers: json })).status).toBe(400);
    expect(only().attributes).toMatchObject({ 'url.path': '/Person', 'url.query': 'x=1', 'http.response.status_code': 400 });
  });

  test('a storage failure: 500, the span has an error status and error.type, the storage time spent', async () => {
    const { service, storage } = traced();
    storage.fail = true;
    expect((await service.handle({ method: 'GET', uri: '/Person', headers: json })).status).toBe(500);
    const span = only();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes).toMatchObject({ 'http.response.status_code': 500, 'error.type': '500', 'resourcery.resource': 'Person' });
    expect(span.attributes['resourcery.storage.duration_ms']).toBeGreaterThanOrEqual(19);
    expect(span.attributes['resourcery.storage.duration_ms']).toBeLessThanOrEqual(ms(span));
  });

  test('a method outside the conventions is _OTHER, its name kept in http.request.method_original', async () => {
    const { service } = traced();
    await service.handle({ method: 'BREW', uri: '/Person', headers: {} });
    const span = only();
    expect(span.attributes).toMatchObject({ 'http.request.method': '_OTHER', 'http.request.method_original': 'BREW' });
    expect(span.name).toBe('HTTP Person');
  });

  test('the function traceRequests returns stops the spans', async () => {
    const service = createService();
    services.push(service);
    service.addResource({ name: 'Person' });
    const stop = traceRequests(service);
    await service.handle({ method: 'GET', uri: '/Person' });
    stop();
    await service.handle({ method: 'GET', uri: '/Person' });
    expect(exporter.getFinishedSpans()).toHaveLength(1);
  });
});

describe('parents', () => {
  test('the span active when the request reaches the service is the parent', async () => {
    const { service } = traced();
    const tracer = provider.getTracer('app');
    const parent = tracer.startSpan('app request');
    await context.with(trace.setSpan(context.active(), parent), () => service.handle({ method: 'GET', uri: '/Person', headers: json }));
    parent.end();
    const span = exporter.getFinishedSpans().find((s) => s.name === 'GET Person')!;
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
  });

  test('over HTTP, without an active span, the traceparent header is the parent', async () => {
    const service = createService();
    services.push(service);
    service.addResource({ name: 'Person' });
    service.observe(tracingObserver({ tracer: provider.getTracer('given') }));
    const server = createServer(service).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/Person`, {
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      });
      expect(res.status).toBe(204);
    } finally {
      server.close();
    }
    const span = only();
    expect(span.instrumentationScope.name).toBe('given');
    expect(span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(span.parentSpanContext?.isRemote).toBe(true);
  });

  test('without either, the span starts a trace of its own', async () => {
    const { service } = traced();
    await service.handle({ method: 'GET', uri: '/Person', headers: json });
    expect(only().parentSpanContext).toBeUndefined();
  });
});
