import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createService } from '@resourcery/core';
import { guardedLookup, outgoingFetch, refusedHost } from '../src/outgoing/guard';

/** The connection-level SSRF guard: the address a request connects to is the one checked. */

let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((_req, res) => res.end('internal'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('outgoing requests connect only to allowed addresses, checked on the lookup the connection uses', () => {
  test('a name that resolves to loopback is refused at connection time, with no earlier check', async () => {
    const error = await outgoingFetch(false)(`http://localhost:${port}/`).then(
      () => null,
      (e: Error & { cause?: Error }) => e,
    );
    expect(error).not.toBeNull();
    expect(String(error!.cause?.message)).toMatch(/localhost resolves to .*loopback/);
  });

  test('with private destinations allowed, the same request goes through', async () => {
    const res = await outgoingFetch(true)(`http://localhost:${port}/`);
    expect(await res.text()).toBe('internal');
  });

  test('guardedLookup refuses a name whose answer is a private address', async () => {
    const refused = await new Promise<Error | null>((resolve) => guardedLookup('localhost', {}, (e) => resolve(e)));
    expect(refused?.message).toMatch(/loopback/);
  });
});

describe('IPv6 forms that carry an IPv4 address are judged by that address', () => {
  test.each([
    '[::127.0.0.1]',
    '[::7f00:1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::10.0.0.1]',
    '[::169.254.169.254]',
    '[::ffff:192.168.1.1]',
  ])('http://%s/ is refused', (host) => {
    expect(refusedHost(new URL(`http://${host}/`))).toMatch(/address/);
  });

  test.each(['[::8.8.8.8]', '[2001:4860:4860::8888]', '8.8.8.8'])('http://%s/ (public) is allowed', (host) => {
    expect(refusedHost(new URL(`http://${host}/`))).toBeNull();
  });

  test('a webhook to http://[::127.0.0.1]/ is refused when saved', async () => {
    const service = createService();
    service.defineEvent('Ping');
    const r = await service.handle({
      method: 'POST',
      uri: '/Service.Admin.Webhook',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ EventSelector: '/Ping', Destination: 'http://[::127.0.0.1]:8080/hook' }),
    });
    expect(r.status).toBe(400);
    expect(JSON.parse(String(r.body)).ErrorCode).toBe('InvalidDestination');
  });
});
