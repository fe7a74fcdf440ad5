import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { Agent, fetch as undiciFetch } from 'undici';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard (docs/webhooks.md): outgoing requests of webhooks, Source and Destination may
 * not reach loopback, private, link-local, unique-local, unspecified or metadata
 * addresses unless the service allows private destinations. Hosts are checked as
 * written when a webhook is saved and as resolved before every request.
 */

/** Names that always mean this machine or a cloud metadata service. */
const LOCAL_NAMES = /(^|\.)localhost$|^metadata$|^metadata\.google\.internal$|^metadata\.goog$|^instance-data(\.ec2\.internal)?$/;

/** Why an address may not be reached, or null when it may. */
function refusedAddress(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return null;
  }
  if (ip.kind() === 'ipv6') ip = embeddedIPv4(ip as ipaddr.IPv6) ?? ip;
  const range = ip.range();
  // Anything but ordinary unicast (private, loopback, link-local with the metadata
  // address 169.254.169.254, unique-local, carrier-grade NAT, reserved...) is refused.
  return range === 'unicast' ? null : `${address} is a ${describe(range)} address`;
}

/**
 * The IPv4 address inside an IPv4-mapped (`::ffff:127.0.0.1`) or deprecated
 * IPv4-compatible (`::127.0.0.1`, which URL parsing turns into `::7f00:1`) address, which
 * reach that IPv4 host on dual-stack systems. `::` and `::1` are IPv6's own.
 */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = ip.parts;
  if (p[0] !== 0 || p[1] !== 0 || p[2] !== 0 || p[3] !== 0 || p[4] !== 0) return null;
  const compatible = p[5] === 0 && !(p[6] === 0 && (p[7] === 0 || p[7] === 1));
  if (p[5] !== 0xffff && !compatible) return null;
  return new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
}

function describe(range: string): string {
  return range.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}

/** The URL's host without IPv6 brackets or a trailing dot. */
function hostOf(url: URL): string {
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

/** The check on save: the host as written (a name is resolved only when sending). */
export function refusedHost(url: URL): string | null {
  const host = hostOf(url);
  if (LOCAL_NAMES.test(host)) return `${host} is a local or metadata host name`;
  return ipaddr.isValid(host) ? refusedAddress(host) : null;
}

export type Resolve = (host: string) => Promise<string[]>;

const resolveAll: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The check before sending: every address the host resolves to, for a clear error early.
 * The connection itself is made through `guardedLookup`, which checks again.
 */
export async function refusedResolved(url: URL, resolve: Resolve = resolveAll): Promise<string | null> {
  const literal = refusedHost(url);
  if (literal !== null) return literal;
  const host = hostOf(url);
  if (ipaddr.isValid(host)) return null;
  for (const address of await resolve(host)) {
    const reason = refusedAddress(address);
    if (reason !== null) return `${host} resolves to ${reason}`;
  }
  return null;
}

/** Whether a URI has a scheme (`https:`); otherwise it is a local one. */
export function isAbsolute(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(text);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

/**
 * A DNS lookup for outgoing connections that fails for refused addresses. The connection
 * uses the very addresses checked here, so a name cannot answer a public address to the
 * check and a private one to the connection (DNS rebinding).
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
    if (error) return callback(error);
    for (const a of addresses) {
      const reason = refusedAddress(a.address);
      if (reason !== null) return callback(Object.assign(new Error(`${hostname} resolves to ${reason}`), { code: 'EADDRREFUSED' }));
    }
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]?.address, addresses[0]?.family);
  });
}

let guardedAgent: Agent | undefined;

/** fetch for outgoing requests: connections go through the guarded lookup unless private destinations are allowed. */
export function outgoingFetch(allowPrivate: boolean): typeof fetch {
  if (allowPrivate) return fetch;
  guardedAgent ??= new Agent({ connect: { lookup: guardedLookup as never } });
  const agent = guardedAgent;
  return ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
}
