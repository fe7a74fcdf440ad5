/**
 * Grammar-aware request generator for the fuzz harness: URIs built from the URI language's
 * parts (resource names, conditions, meta-conditions) with hostile twists, methods, headers
 * and bodies (deep nesting, huge values, prototype-pollution keys, broken JSON).
 */

import { META_KEYS } from '@resourcery/core/storage';
export interface FuzzRequest {
  method: string;
  uri: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A small seeded PRNG (mulberry32): a failing request can be replayed from its seed. */
export class Random {
  constructor(private state: number) {}

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}

const RESOURCES = [
  'Person',
  'person',
  'Order',
  'Service.Admin.Error',
  'Service.Admin.Macro',
  'Service.Admin.Protocol',
  'Nope',
  '日本',
  '',
  '.',
  '..',
  '%2e%2e',
  'Person.Extra',
  '__proto__',
];
const PROPERTIES = [
  'Name',
  'Age',
  'Email',
  'Address.City',
  'Tags',
  '__proto__',
  'constructor',
  'prototype',
  'constructor.prototype',
  'a.b.c.d',
  'Id',
  'x'.repeat(300),
  '',
];
const OPERATORS = ['=', '!=', '>', '>=', '<', '<=', '~=', '==', '=>', '', '=*'];
const VALUES = [
  'Ann',
  '30',
  '-1',
  '1e400',
  'null',
  'true',
  "'quoted'",
  '"x"',
  '%00',
  '%zz',
  '%',
  '',
  '2026-01-01',
  '[1,2]',
  '{}',
  'a,b',
  '\u0000',
  '💥',
  'x'.repeat(5000),
];
// Every real meta-condition, and names that are not.
const META = [...META_KEYS, 'top', ''];
const META_VALUES = [
  '10',
  '-5',
  '0',
  'abc',
  'Name',
  'Name,Age',
  '__proto__',
  'Name:Alias',
  'X=1',
  'true',
  'false',
  '(a%2B)%2B',
  '.*.*x',
  '(%3F%3Da)',
  '%5B',
  'a.*a.*b,Name,CS',
  'ann,,CI',
  '99999999999999999999',
];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'DELETE', 'REPORT', 'HEAD', 'OPTIONS', 'get', 'FOO', 'TRACE', ''];
const ACCEPTS = [
  'application/json',
  'application/json;raw=true',
  'application/x-ndjson',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'text/html',
  '*/*',
  'image/png',
  ';;;',
  'application/json;q=x',
  '',
];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/x-ndjson',
  'text/plain',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'multipart/form-data',
  'application/json; charset=latin1',
  ';',
  '',
];
/** Outgoing targets refused before any network use (private, malformed or local-only). */
const TARGETS = [
  'http://127.0.0.1:1/x',
  'http://[::127.0.0.1]/x',
  'http://[::ffff:10.0.0.1]/',
  'http://localhost/x',
  'file:///etc/passwd',
  'not a url',
  '/Person',
  'http://169.254.169.254/latest',
];
const KEYS = [
  'Name',
  'Age',
  'Email',
  'Address',
  'Tags',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'Id',
  '',
  ' ',
  'Authorization',
  'apikey',
  'password',
];

function condition(r: Random): string {
  if (r.chance(0.1)) return r.pick(VALUES);
  return `${r.pick(PROPERTIES)}${r.pick(OPERATORS)}${r.pick(VALUES)}`;
}

function conditions(r: Random): string {
  if (r.chance(0.3)) return '_';
  return Array.from({ length: 1 + r.int(3) }, () => condition(r)).join(r.chance(0.9) ? '&' : r.pick(['&&', '|', ';', '/']));
}

function meta(r: Random): string {
  return Array.from({ length: 1 + r.int(3) }, () => `${r.pick(META)}=${r.pick(META_VALUES)}`).join('&');
}

export function uri(r: Random): string {
  let u = `/${r.pick(RESOURCES)}`;
  const shape = r.int(10);
  if (shape >= 3) u += `/${conditions(r)}`;
  if (shape >= 6) u += `/${meta(r)}`;
  if (shape === 9) u += '/extra/segments';
  if (r.chance(0.05)) u += `?${r.pick(['id=1', 'apikey=secret', '_sort=Name', '', 'a=%zz'])}`;
  if (r.chance(0.03)) u = u.replace(/\//g, r.pick(['//', '/./', '\\']));
  if (r.chance(0.02)) u = r.pick(['', '*', 'http://x/Person', '/%', '/%ff%fe', `/${'a/'.repeat(2000)}`]);
  if (r.chance(0.05)) u = nestedRoute(r);
  return u;
}

/** json-server's nested routes (`/posts/1/comments`) and other paths after a bare key: each must parse or be a 400, never reach the parent. */
function nestedRoute(r: Random): string {
  const parent = r.pick(['Person', 'Order', 'posts', 'person']);
  const key = r.pick(['1', '2', '20', '999', 'x', '%2F', '1.5']);
  const rest = r.pick(['comments', 'foo/bar', 'Order', '1', 'Id=1', 'Name', '_/limit=1', 'comments/1', '', 'limit=1/extra']);
  return `/${parent}/${key}/${rest}`;
}

/** A JSON value nested `depth` levels deep, as objects or arrays. */
function nested(r: Random, depth: number): unknown {
  let v: unknown = r.pick(['leaf', 1, null]);
  for (let i = 0; i < depth; i++) v = r.chance(0.5) ? [v] : { [r.pick(KEYS)]: v };
  return v;
}

function value(r: Random, budget: number): unknown {
  const k = r.int(12);
  if (k === 0 && budget > 0) return Object.fromEntries(Array.from({ length: r.int(4) }, () => [r.pick(KEYS), value(r, budget - 1)]));
  if (k === 1 && budget > 0) return Array.from({ length: r.int(4) }, () => value(r, budget - 1));
  if (k === 2) return nested(r, r.pick([10, 63, 64, 65, 200, 2000]));
  if (k === 3) return 'x'.repeat(r.pick([0, 1000, 100_000]));
  if (k === 4) return r.pick([0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2]);
  if (k === 5) return r.pick([true, false, null]);
  return r.pick(VALUES);
}

function entity(r: Random): Record<string, unknown> {
  const e: Record<string, unknown> = {};
  for (let i = r.int(5); i > 0; i--) e[r.pick(KEYS)] = value(r, 2);
  return e;
}

/** Entities in a big body, around the fuzz service's maxEntities (FUZZ_MAX_ENTITIES) and past it. */
export const FUZZ_MAX_ENTITIES = 2000;

/** A body of many small entities: up to and past maxEntities, sometimes with one bad entity at the end. */
function bigBody(r: Random): string {
  const n = r.pick([FUZZ_MAX_ENTITIES - 1, FUZZ_MAX_ENTITIES, FUZZ_MAX_ENTITIES + 1, 3 * FUZZ_MAX_ENTITIES, 500]);
  const items = Array.from({ length: n }, (_, i) => ({ Id: 1000 + i, Name: `n${i}`, Age: i % 90 }));
  const text = JSON.stringify(items);
  return r.chance(0.2) ? `${text.slice(0, -1)},${r.pick(['1', 'null', '{"Name":', '"x"'])}]` : text;
}

function body(r: Random): string | undefined {
  if (r.chance(0.004)) return bigBody(r);
  if (r.chance(0.0005)) return 'x'.repeat(11 * 1024 * 1024);
  const k = r.int(10);
  if (k === 0) return undefined;
  if (k === 1) return r.pick(['', '{', '[1,', '{"a":}', 'null', '"x"', '42', 'not json', '\uFEFF{}', '{"Name":"a","password":"s3cret"']);
  if (k === 2) return JSON.stringify(Array.from({ length: r.int(5) }, () => entity(r)));
  if (k === 3) return `${'['.repeat(r.pick([100, 5000]))}1${']'.repeat(r.pick([0, 100, 5000]))}`;
  if (k === 4) return '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}';
  if (k === 5) return `${JSON.stringify(entity(r))}\n${JSON.stringify(entity(r))}\n{bad`;
  if (k === 6 && r.chance(0.3))
    return JSON.stringify({
      Name: r.pick(['m1', '', 'x']),
      Uri: uri(r),
      Body: entity(r),
      Headers: { [r.pick(['Accept', 'authorization ', 'Cookie', 'X-A', 'bad name', ' Proxy-Authorization'])]: 'v' },
    });
  return JSON.stringify(entity(r));
}

function headers(r: Random, payload: string | undefined): Record<string, string> {
  const h: Record<string, string> = {};
  if (r.chance(0.7)) h.accept = r.pick(ACCEPTS);
  if (payload !== undefined && r.chance(0.9)) h['content-type'] = r.pick(CONTENT_TYPES);
  if (r.chance(0.03)) h.destination = r.pick(TARGETS);
  if (r.chance(0.03)) h.source = r.pick(TARGETS);
  if (r.chance(0.03))
    h[r.pick(['if-match', 'if-none-match', 'x-http-method-override', 'authorization', 'x-api-key'])] = r.pick([
      '*',
      '"x"',
      'W/"1"',
      'Basic Zm9v',
      'key',
      '',
    ]);
  return h;
}

export function request(r: Random): FuzzRequest {
  const payload = body(r);
  return { method: r.pick(METHODS), uri: uri(r), headers: headers(r, payload), body: payload };
}
