import { createService, type Entity, type PlainResponse, type Service, type Storage } from '@resourcery/core';
import type { SqlClient } from '@resourcery/sql';
import type { Client, Pool } from 'pg';

/** Checked by tsc: pg's Pool and Client can be given as `client` (the storage never imports pg). */
export const pgClientsFit: [Pool, Client] extends [SqlClient, SqlClient] ? true : false = true;

/** Entities that stress the comparison rules: mixed types, null and missing, nesting, key case, unicode. */
export const PEOPLE: Entity[] = [
  {
    Id: 1,
    Name: 'Ann',
    Age: 30,
    Zip: '02139',
    Active: true,
    Born: '1994-03-01',
    Tags: ['a', 'b'],
    Address: { City: 'Oslo', Zip: 150 },
    Score: 1.5,
  },
  {
    Id: 2,
    name: 'bo',
    AGE: 25,
    Zip: 2139,
    Active: 'true',
    Born: '1999-12-31T23:00:00.000Z',
    Tags: [],
    Address: { city: 'Bergen' },
    Score: -0.5,
  },
  { Id: 3, NAME: 'Cy', Age: '30', Zip: null, Active: false, Born: '2000-02-30T00:00:00.000Z', Tags: 'x,y', Address: null, Score: 1e21 },
  { Id: 4, Name: '', Age: null, Active: null, Born: '2001-01-01T10:00', Tags: [1, [2, 3]], Address: { City: { Name: 'Nested' } } },
  { Id: 5, Name: 'Ünïcode 😀', Age: 41.5, Zip: '2139', Born: 'not a date', Tags: ['😀😀'], Address: 'Main St', Score: 0 },
  { Id: 6, Name: 'ann', Age: -3, Zip: '02139 ', Born: 20240101, Address: { City: 'oslo', Zip: '0150' }, Score: '1.5' },
  { Id: 7, Name: 'Zed\uffff', Age: 1e-7, Tags: [null], Address: { CITY: 'Trondheim' }, Score: true, Größe: 180 },
  { Id: 8, größe: 170, '\u212Aey': 'kelvin', Name: null, Born: '2024-02-29T12:00:00.000Z', Age: 30 },
  { Id: 9, Name: '😀 first', Age: 30, Born: '2023-02-29T00:00:00.000Z', Tags: ['b', 'a', 'c'] },
  { Id: 10 },
  { Id: 11, Name: ['Ann'], Age: { Years: 30 }, Born: '2024-02-29T12:00:00+01:00', Tags: { length: 'own' } },
  { Id: 12, Name: 'Ann', Age: 30, Born: '2024-02-29T11:00:00.000Z', 'Address.City': 'flat key', Key: 'plain' },
  {
    Id: 13,
    Name: { Length: 3 },
    Age: 1e300,
    Zip: '',
    Born: '2024-02-29',
    Tags: ['x', 'y', 'z', 'w'],
    Address: { City: 'Ås' },
    Score: false,
  },
  { Id: 14, 2024: 'year', 'A"b': 'quoted key', _id: 7, Tags: ['\\', '"'], Address: { ZIP: '0150' }, Score: '' },
];

/** Property locators: every case spelling, dotted paths, derived lengths, indexes, missing ones. */
export const LOCATORS = [
  'Id',
  'Name',
  'name',
  'NAME',
  'nAmE',
  'Age',
  'age',
  'Zip',
  'Active',
  'Born',
  'Tags',
  'Tags.Length',
  'tags.LENGTH',
  'Tags.0',
  'Tags.1',
  'Tags.1.0',
  'Tags.01',
  'Tags.1e0',
  'Tags.-1',
  'Address',
  'Address.City',
  'address.city',
  'Address.Zip',
  'Address.City.Name',
  'Address.City.Length',
  'Name.Length',
  'name.length',
  'Score',
  'Größe',
  'größe',
  'key',
  'Missing',
  'Address.Missing.Deep',
  'Length',
  'Name.Length.Length',
  'Name.0',
  'a"B',
  '_ID',
  '_id',
  'Na\0me',
  '2024',
  'Address.2024',
  '0',
];

/** Condition values as written in a URI (before percent-encoding). */
export const VALUES = [
  'null',
  '',
  "''",
  "'Ann'",
  'Ann',
  'ann',
  '30',
  '30.0',
  '-3',
  '1.5',
  '1e21',
  '1e999',
  '-1e999',
  '02139',
  '2139',
  '150',
  '0',
  '1',
  '2',
  '3',
  '4',
  'true',
  'false',
  '"true"',
  '2000-01-01',
  '2000-03-01T00:00:00.000Z',
  '2024-02-29T12:00:00Z',
  '2024-02-29T11:30:00Z',
  '2001-01-01T10:00',
  '2024-02-29',
  '😀',
  'Ünïcode',
  'Z',
  '\uffff',
  'x,y',
  'Oslo',
  'oslo',
  'a',
  "x'y",
  'kelvin',
  'quoted key',
  '\\',
  '"',
  '7',
  'nul\0',
];

export const OPERATORS = ['=', '!=', '<', '>', '<=', '>='];

/** The locator with the case of its letters flipped where `bits` says so (locators are case-insensitive). */
export function recased(locator: string, bits: number): string {
  return [...locator].map((c, i) => ((bits >> (i % 30)) & 1 ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c)).join('');
}

export const condition = (locator: string, op: string, value: string) => `${encodeURIComponent(locator)}${op}${encodeURIComponent(value)}`;

export const RAW = { accept: 'application/json;raw=true' };

export interface Reply {
  status: number;
  json: unknown;
  headers: Record<string, string>;
}

async function bodyText(body: PlainResponse['body']): Promise<string> {
  if (body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  let text = '';
  for await (const chunk of body) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return text;
}

export async function call(
  service: Service,
  method: string,
  uri: string,
  body?: unknown,
  headers: Record<string, string> = RAW,
): Promise<Reply> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const res = await service.handle({
    method,
    uri,
    headers: text === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: text,
  });
  const out = await bodyText(res.body);
  return { status: res.status, json: out === '' ? undefined : JSON.parse(out), headers: res.headers };
}

/** What a client can compare: error bodies hold times and record ids, so only their codes count. */
export function comparable(reply: Reply): unknown {
  if (reply.status >= 400) return { status: reply.status, code: (reply.json as { ErrorCode?: string } | undefined)?.ErrorCode };
  return { status: reply.status, body: reply.json };
}

/** What `select` said it applied, request by request. */
export interface Applied {
  conditions: boolean;
  paging: boolean;
}

/** A storage seen through: records what each select applied, changes nothing. */
export function recording(storage: Storage, log: Applied[]): Storage {
  return {
    select: async (query) => {
      const result = await storage.select(query);
      log.push({ conditions: result.conditionsApplied, paging: result.pagingApplied });
      return result;
    },
    count: storage.count && ((query) => storage.count!(query)),
    write: (batch) => storage.write(batch),
  };
}

/** A service with one schemaless resource `Person` on the given storage. */
export function serviceOn(storage: Storage): Service {
  const service = createService();
  service.addResource({ name: 'Person', storage });
  return service;
}
