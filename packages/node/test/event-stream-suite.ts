import type { IncomingMessage } from 'node:http';
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
