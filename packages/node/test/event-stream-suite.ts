import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { createService, type Service } from '@resourcery/core';
import { SseReader } from '../../core/test/sse-support';

/** What each adapter's test gives the suite: a server for the service, its context made from a request's cookie. */
export type StartServer = (
  service: Service,
  context: (req: IncomingMessage) => unknown,
) => Promise<{ url: string; close(): Promise<void> }>;

/** The session a cookie names, as an app's session middleware would find it. */
export function sessionOf(req: IncomingMessage): { user?: string } {
  const m = /(?:^|;\s*)session=(\w+)/.exec(req.headers.cookie ?? '');
  return { user: m?.[1] };
}

/**
 * Event streams through an adapter on a real server: the headers and each message go out
 * at once (a stream that waited for more would never show its first event), the adapter's
 * context authenticates the subscriber (cookie sessions, as a browser's EventSource sends
 * them), and a client that leaves frees its stream.
 */
export function eventStreamSuite(start: StartServer): void {
  let close: (() => Promise<void>) | undefined;
  const services: Service[] = [];
  afterEach(async () => {
    await close?.();
    close = undefined;
    await Promise.all(services.splice(0).map((s) => s.close()));
  });

  async function serve(): Promise<{ url: string; service: Service }> {
    const service = createService({
      streams: { maxBufferBytes: 64 * 1024 },
      authenticate: (_request, context: { user?: string }) => {
        if (context?.user === undefined) throw new Error('no session');
        return { user: context.user };
      },
    });
    services.push(service);
    service.addResource({
      name: 'Note',
      rules: { rows: (caller) => (caller.principal.user === 'admin' ? null : `Owner=${caller.principal.user}`) },
    });
    const server = await start(service, sessionOf);
    close = server.close;
    return { url: server.url, service };
  }

  const STREAM = { accept: 'text/event-stream', 'accept-encoding': 'gzip, deflate, br' };

  test('the headers and every message go out at once, uncompressed, to the subscriber the cookie names', async () => {
    const { url, service } = await serve();
    const controller = new AbortController();
    const response = await fetch(`${url}/Note.Inserted`, { headers: { ...STREAM, cookie: 'session=ann' }, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('content-encoding')).toBeNull();
    const reader = new SseReader(response.body as unknown as AsyncIterable<Uint8Array>);
    expect(await reader.nextAny()).toEqual({ comment: 'ok' });
    const post = (body: unknown) =>
      fetch(`${url}/Note`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: 'session=admin' },
        body: JSON.stringify(body),
      });
    expect((await post([{ Id: 1, Owner: 'bob' }])).status).toBe(201);
    expect(
      (
        await post([
          { Id: 2, Owner: 'ann' },
          { Id: 3, Owner: 'bob' },
        ])
      ).status,
    ).toBe(201);
    expect(await reader.nextJson()).toMatchObject({ event: 'Note.Inserted', data: [{ Id: 2, Owner: 'ann' }] });
    expect(service.streams.opened()).toBe(1);
    controller.abort();
    await reader.close().catch(() => undefined);
    await eventually(() => service.streams.opened() === 0);
  });

  test('a subscriber that stops reading is cut off past maxBufferBytes: a final event: closed, its slot freed', async () => {
    const { url, service } = await serve();
    const admin = { context: { user: 'admin' } };
    const patch = (text: string) =>
      service.handle(
        { method: 'PATCH', uri: '/Note/Id=1', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Text: text }) },
        admin,
      );
    await service.handle(
      { method: 'POST', uri: '/Note', headers: { 'content-type': 'application/json' }, body: '{"Id":1,"Owner":"ann"}' },
      admin,
    );
    // A client that reads nothing: the kernel's buffers fill, then the adapter's, then the stream's.
    const { hostname, port, pathname } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    socket.pause();
    await once(socket, 'connect');
    socket.write(`GET ${pathname}/Note.Updated HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\nCookie: session=ann\r\n\r\n`);
    try {
      await eventually(() => service.streams.opened() === 1);
      // 4,000 updates of 8 KB each: 32 MB, more than any buffer between the two ends holds.
      const filler = 'x'.repeat(8192);
      for (let i = 0; i < 4000; i++) expect((await patch(`${i} ${filler}`)).status).toBe(200);
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received = received.slice(-100_000) + chunk));
      socket.resume();
      await eventually(() => received.includes('event: closed'));
      expect(received).toMatch(/event: closed\ndata: \{"Reason":"SlowConsumer"/);
      // The updates after the cut were never queued: the last one sent is far from the last one made.
      const sent = [...received.matchAll(/"Text":"(\d+) /g)].map((m) => Number(m[1]));
      expect(sent[sent.length - 1]).toBeLessThan(3999);
      await eventually(() => service.streams.opened() === 0);
    } finally {
      socket.destroy();
    }
  });

  test('without a session the subscription is 401, before any stream opens', async () => {
    const { url, service } = await serve();
    const response = await fetch(`${url}/Note.Inserted`, { headers: STREAM });
    expect(response.status).toBe(401);
    expect(service.streams.opened()).toBe(0);
  });
}

/** Waits until the condition holds (a guard of 10 s, not a timing). */
async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}
