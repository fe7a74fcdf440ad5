import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedLookup, outgoingFetch } from '../src/webhooks/guard';

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
    const error = await outgoingFetch(false)(`http://localhost:${port}/`).then(() => null, (e: Error & { cause?: Error }) => e);
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
