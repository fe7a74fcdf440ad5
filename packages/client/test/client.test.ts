import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Koa from 'koa';
import { createClient, ResourceryError, type Client } from '@resourcery/client';
import { createService, type Service } from '@resourcery/core';
import { createExpressMiddleware } from '@resourcery/express';
import { createKoaMiddleware } from '@resourcery/koa';
import { createServer } from '@resourcery/node';

interface Product {
  Sku: string;
  Name: string;
  Price: number;
  Tags?: string[];
}

/** Names hold every character that must survive a URI: & / = % < > ! ' and operators. */
const PRODUCTS: Product[] = [
  { Sku: 'B-1', Name: 'Nuts&Bolts', Price: 4 },
  { Sku: 'S-7', Name: 'Saw 1/2"', Price: 25 },
  { Sku: 'E-2', Name: 'a=b', Price: 7 },
  { Sku: 'P-5', Name: '100% cotton', Price: 12 },
  { Sku: 'O-9', Name: '>=<!=', Price: 3 },
  { Sku: 'Q-1', Name: "it's (new)*", Price: 30 },
  { Sku: '007', Name: 'null', Price: 1 },
];

function makeService(): Service {
  const service = createService({
    apiKeys: [{ key: 'k-1', allow: [{ resources: ['*'], methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }] }],
  });
  service.addResource({
    name: 'Shop.Product',
    schema: {
      type: 'object',
      properties: { Sku: { type: 'string' }, Name: { type: 'string' }, Price: { type: 'number' }, Tags: { type: 'array' } },
      required: ['Sku', 'Name', 'Price'],
    },
    views: [{ name: 'Cheap', conditions: 'Price<10' }],
    key: 'Sku',
  });
  service.addResource({ name: 'Person', key: 'Id' });
  service.addResource({ name: 'Order', key: ['Shop', 'No'] });
  return service;
}

interface Person {
  Id: number;
  Name: string;
}

/** Every adapter, each serving the service under /api. */
function koaServer(service: Service): http.Server {
  const app = new Koa();
  app.use(createKoaMiddleware(service, { prefix: '/api' }));
  return http.createServer(app.callback());
}

const adapters: Array<[string, (service: Service) => http.Server]> = [
  ['node', (service) => createServer(service, { basePath: '/api' })],
  ['express', (service) => http.createServer(express().use('/api', createExpressMiddleware(service)))],
  ['koa', koaServer],
];

describe.each(adapters)('@resourcery/client against %s', (_name, serve) => {
  let service: Service;
  let server: http.Server;
  let client: Client;

  beforeAll(async () => {
    service = makeService();
    server = serve(service);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`, apiKey: 'k-1' });
    const res = await client.resource<Product>('Shop.Product').post(PRODUCTS);
    expect(res.inserted).toBe(PRODUCTS.length);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await service.close();
  });

  const products = () => client.resource<Product>('Shop.Product');

  test.each(PRODUCTS.map((p) => [p.Name, p]))('a value with special characters survives: %s', async (name, product) => {
    expect(await products().where('Name', '=', name).get()).toEqual([product]);
    expect(await products().where({ Name: name }).count()).toBe(1);
  });

  test('a numeric-looking string stays a string, and the string "null" is not null', async () => {
    expect(products().where({ Sku: '007' }).uri()).toBe("/Shop.Product/Sku='007'");
    expect((await products().where({ Sku: '007' }).get()).map((p) => p.Name)).toEqual(['null']);
    expect(await products().where('Name', '=', null).get()).toEqual([]);
  });

  test('a list of values is any of them (alternatives), each value encoded, `|` inside one included', async () => {
    const names = PRODUCTS.map((p) => p.Name);
    const q = products().where('Name', '=', [names[0], names[1], 'no|such']);
    expect(q.uri()).toMatch(/^\/Shop\.Product\/Name='[^|]*'\|Name='[^|]*'\|Name='no%7Csuch'$/);
    expect((await q.get()).map((p) => p.Name)).toEqual([names[0], names[1]]);
    expect(await products().where({ Name: names }).count()).toBe(PRODUCTS.length);
    expect(() => products().where('Name', '=', [])).toThrow(TypeError);
  });

  test('from a browser that sends `|` as %7C (Chromium), alternatives are still OR and a `|` inside a value still literal', async () => {
    const sent: Array<[string, string | null]> = [];
    const chromium = createClient({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
      apiKey: 'k-1',
      fetch: (input, init) => {
        const url = String(input).replace(/\|/g, '%7C');
        sent.push([new URL(url).pathname, new Headers(init?.headers).get('x-resourcery-uri')]);
        return fetch(url, init);
      },
    });
    const names = PRODUCTS.map((p) => p.Name);
    const q = chromium.resource<Product>('Shop.Product').where('Name', '=', [names[0], 'no|such', names[2]]);
    expect((await q.get()).map((p) => p.Name)).toEqual([names[0], names[2]]);
    expect(sent).toEqual([[`/api${q.uri().replace(/\|/g, '%7C')}`, q.uri()]]);
    expect(q.uri()).toContain("Name='no%7Csuch'");
    // Without alternatives nothing extra is sent.
    await chromium.resource<Product>('Shop.Product').where({ Sku: 'B-1' }).get();
    expect(sent[1][1]).toBeNull();
  });

  test('conditions and meta-conditions build the URI a person would write', async () => {
    const q = products().where('Price', '>', 5).where('Price', '<=', 25).orderDesc('Price').limit(2).select('Name', 'Price');
    expect(q.uri()).toBe('/Shop.Product/Price>5&Price<=25/order_desc=Price&limit=2&select=Name,Price');
    expect(await q.get()).toEqual([
      { Name: 'Saw 1/2"', Price: 25 },
      { Name: '100% cotton', Price: 12 },
    ]);
    expect(await products().orderAsc('Price').offset(1).limit(1).select('Sku').get()).toEqual([{ Sku: 'O-9' }]);
    expect(await products().where('Price', '<', 5).rename({ Name: 'Title' }).select('Title').orderAsc('Title').get()).toEqual([
      { Title: '>=<!=' },
      { Title: 'Nuts&Bolts' },
      { Title: 'null' },
    ]);
    expect(await products().select('Name').add('Name.Length').where({ Sku: 'B-1' }).get()).toEqual([
      { Name: 'Nuts&Bolts', 'Name.Length': 10 },
    ]);
  });

  test('several order keys: one call lists them, and the direction called first is the primary order', async () => {
    const skus = async (q: ReturnType<typeof products>) => (await q.select('Sku').get()).map((p) => p.Sku);
    const byLengthThenPrice = products().orderDesc('Name.Length', 'Price');
    expect(byLengthThenPrice.uri()).toBe('/Shop.Product/_/order_desc=Name.Length,Price');
    // Two names of 11 characters: the higher price first.
    expect(await skus(byLengthThenPrice)).toEqual(['Q-1', 'P-5', 'B-1', 'S-7', 'O-9', '007', 'E-2']);
    const mixed = products().orderDesc('Name.Length').orderAsc('Sku');
    expect(mixed.uri()).toBe('/Shop.Product/_/order_desc=Name.Length&order_asc=Sku');
    expect((await skus(mixed)).slice(0, 3)).toEqual(['P-5', 'Q-1', 'B-1']);
    expect(() => products().orderAsc()).toThrow(TypeError);
  });

  test('search and search_regex with characters that must be encoded', async () => {
    expect((await products().search('w 1/2').get()).map((p) => p.Sku)).toEqual(['S-7']);
    expect(
      (
        await products()
          .searchRegex(/\d+% c/)
          .get()
      ).map((p) => p.Sku),
    ).toEqual(['P-5']);
    expect((await products().search('s&b').get()).map((p) => p.Sku)).toEqual(['B-1']);
  });

  test('views, exists, first', async () => {
    expect(products().view('Cheap').uri()).toBe('/Shop.Product-Cheap');
    expect(await products().view('Cheap').count()).toBe(4);
    expect(await products().where({ Name: 'missing' }).exists()).toBe(false);
    expect(await products().where({ Name: 'a=b' }).exists()).toBe(true);
    expect(await products().orderDesc('Price').first()).toEqual(PRODUCTS[5]);
  });

  test('macros: /$name with the caller adding conditions', async () => {
    await client.resource('Service.Admin.Macro').post({ Name: 'Pricey', Uri: '/Shop.Product/Price>10/order_asc=Price' });
    expect(client.macro('Pricey').where('Name', '!=', 'x').uri()).toBe("/$Pricey/Name!='x'");
    expect((await client.macro<Product>('Pricey').get()).map((p) => p.Sku)).toEqual(['P-5', 'S-7', 'Q-1']);
    expect((await client.macro<Product>('Pricey').where('Price', '<', 20).get()).map((p) => p.Sku)).toEqual(['P-5']);
  });

  test('writes: PATCH, PUT, DELETE and unsafe', async () => {
    const q = products().where({ Sku: 'E-2' });
    expect((await q.patch({ Price: 8 })).data).toEqual([{ Sku: 'E-2', Name: 'a=b', Price: 8 }]);
    expect((await products().where({ Sku: 'N-1' }).put({ Sku: 'N-1', Name: 'new & shiny', Price: 2 })).status).toBe(201);
    const many = products().where('Price', '<', 3);
    await expect(many.delete()).rejects.toMatchObject({ status: 400, code: 'AmbiguousMatch' });
    expect((await many.unsafe().delete()).deleted).toBe(2);
    await products().post([{ Sku: '007', Name: 'null', Price: 1 }]);
    await products().where({ Sku: 'E-2' }).patch({ Price: 7 });
  });

  test('keys: a bare value addresses one entity; POST generates a missing key; a taken key is 409', async () => {
    const people = () => client.resource<Person>('Person');
    expect((await people().post([{ Name: 'Ada' }, { Name: 'Alan' }])).data).toEqual([
      { Name: 'Ada', Id: 1 },
      { Name: 'Alan', Id: 2 },
    ]);
    expect(people().key(2).uri()).toBe('/Person/2');
    expect(await people().key(2).get()).toEqual([{ Name: 'Alan', Id: 2 }]);
    expect(await people().key(2).select('Name').get()).toEqual([{ Name: 'Alan' }]);
    expect((await people().key(2).patch({ Name: 'Alan T.' })).data).toEqual([{ Name: 'Alan T.', Id: 2 }]);
    expect((await people().key(3).put({ Name: 'Grace' })).status).toBe(201);
    expect(await people().key(3).get()).toEqual([{ Id: 3, Name: 'Grace' }]);
    await expect(people().post({ Id: 1, Name: 'Ada again' })).rejects.toMatchObject({ status: 409, code: 'Conflict' });
    expect((await people().key(1).delete()).deleted).toBe(1);
    expect(await people().key(1).get()).toEqual([]);
    // A string key of a schema-typed property: '007' stays the string, not the number 7.
    expect(await products().key('007').get()).toEqual([PRODUCTS[6]]);
  });

  test('composite keys: values in order, each encoded (commas, slashes, & and ~ inside values survive)', async () => {
    const orders = () => client.resource('Order');
    const shops = ['A', 'A,B', 'x/y&z=1', '~1', '100%'];
    await orders().post(shops.map((Shop, i) => ({ Shop, No: 3, Total: i })));
    expect(orders().key('A,B', 3).uri()).toBe('/Order/A%2CB,3');
    for (const [i, shop] of shops.entries()) expect(await orders().key(shop, 3).get()).toEqual([{ Shop: shop, No: 3, Total: i }]);
    expect((await orders().key('~1', 3).patch({ Total: 9 })).updated).toBe(1);
    expect(await orders().where({ Total: 9 }).get()).toEqual([{ Shop: '~1', No: 3, Total: 9 }]);
    await expect(orders().key('A').get()).rejects.toMatchObject({ status: 400, code: 'InvalidConditionSyntax' });
  });

  test('ETags: one() reads the version, If-None-Match answers notModified, If-Match stops a lost update (412)', async () => {
    const edsger = () => client.resource<Person>('Person').key(10);
    expect((await edsger().put({ Name: 'Edsger' })).status).toBe(201);
    const read = await edsger().one();
    expect(read).toEqual({ entity: { Id: 10, Name: 'Edsger' }, etag: expect.stringMatching(/^"[^"]+"$/), notModified: false });
    expect(await edsger().one({ ifNoneMatch: read.etag })).toEqual({ etag: read.etag, notModified: true });
    // Two read-modify-write clients that read the same version: one write wins, the other is refused.
    const writes = await Promise.allSettled([
      edsger().patch({ Name: `${read.entity!.Name} W.` }, { ifMatch: read.etag }),
      edsger().patch({ Name: `${read.entity!.Name} D.` }, { ifMatch: read.etag }),
    ]);
    const won = writes.filter((w) => w.status === 'fulfilled');
    const lost = writes.filter((w) => w.status === 'rejected');
    expect([won.length, lost.length]).toEqual([1, 1]);
    expect(lost[0].reason).toBeInstanceOf(ResourceryError);
    expect(lost[0].reason).toMatchObject({ status: 412, code: 'PreconditionFailed' });
    const winner = won[0].value;
    const now = await edsger().one({ ifNoneMatch: read.etag });
    expect(now).toEqual({ entity: winner.data[0], etag: winner.etag, notModified: false });
    expect(now.etag).not.toBe(read.etag);
    await expect(edsger().delete({ ifMatch: read.etag })).rejects.toMatchObject({ status: 412, code: 'PreconditionFailed' });
    expect((await edsger().delete({ ifMatch: now.etag })).deleted).toBe(1);
  });

  test('errors are thrown as values with code, status and the Error record link', async () => {
    const error: ResourceryError = await products()
      .where('Nope', '=', 1)
      .get()
      .catch((e) => e);
    expect(error).toBeInstanceOf(ResourceryError);
    expect(error).toMatchObject({ status: 404, code: 'UnknownProperty' });
    expect(error.moreInfoAt).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
    const anonymous = createClient({ baseUrl: client['base' as keyof Client] as unknown as string });
    await expect(anonymous.resource('Shop.Product').get()).rejects.toMatchObject({ status: 401, code: 'NotAuthorized' });
  });

  test('other content types and the OpenAPI document', async () => {
    const lines = await (await products().where('Price', '<', 5).orderAsc('Price').as('application/jsonlines')).text();
    expect(
      lines
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).Sku),
    ).toEqual(['007', 'O-9', 'B-1']);
    const doc = await client.openapi();
    expect(doc.paths['/Shop.Product']).toBeDefined();
    expect(doc.paths['/Shop.Product/{Sku}'].get.operationId).toBe('get_Shop_Product_key');
  });
});

describe('URI building', () => {
  const client = createClient({
    baseUrl: 'http://x',
    fetch: () => {
      throw new Error('no requests here');
    },
  });
  test('keys are bare values; strings encoded, never quoted', () => {
    expect(client.resource('Person').key(7).uri()).toBe('/Person/7');
    expect(client.resource('Person').key('a/b&c').select('Name').uri()).toBe('/Person/a%2Fb%26c/select=Name');
    expect(client.resource('Order').key('B', 3).uri()).toBe('/Order/B,3');
    expect(client.resource('Person').key('~7').uri()).toBe('/Person/%7E7');
    expect(() => client.resource('Person').key()).toThrow(TypeError);
    expect(() => client.resource('Person').key('')).toThrow(TypeError);
    expect(() => client.resource('Person').key(Number.NaN)).toThrow(TypeError);
  });
  test('dates, booleans and nested locators', () => {
    expect(
      client.resource('E').where('At', '>=', new Date('2024-01-02T03:04:05Z')).where({ 'Address.City': 'Oslo', Active: true }).uri(),
    ).toBe("/E/At>=2024-01-02T03%3A04%3A05.000Z&Address.City='Oslo'&Active=true");
  });
  test('a repeated meta-condition is replaced; order_asc and order_desc are two keys, each replaced on its own', () => {
    expect(client.resource('E').limit(5).limit(10).orderDesc('A').orderAsc('B').uri()).toBe('/E/_/limit=10&order_desc=A&order_asc=B');
    expect(client.resource('E').orderAsc('X').orderDesc('A').orderAsc('B', 'C').uri()).toBe('/E/_/order_desc=A&order_asc=B,C');
  });
  test('bad input is refused before any request', () => {
    expect(() => client.resource('E').where('', '=', 1)).toThrow(TypeError);
    expect(() => client.resource('E').where('A', '~' as never, 1)).toThrow(TypeError);
    expect(() => client.resource('E').where('A', '=', Number.NaN)).toThrow(TypeError);
  });
});
