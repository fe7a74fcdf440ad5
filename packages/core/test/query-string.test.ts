import { createService, MemoryStorage } from '@resourcery/core';
import { pathFormOf } from '../src/grammar/query-string';
import { call, RAW } from './handle-support';

/** A query string is 400 InvalidUriSyntax showing the path form (DESIGN 13), never ignored. */

function blog() {
  const service = createService();
  service.addResource({
    name: 'posts',
    storage: new MemoryStorage([
      { id: 1, author: 'me' },
      { id: 2, author: 'you' },
    ]),
  });
  return service;
}

describe('a request with a query string', () => {
  test.each(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'REPORT'])('%s is 400 and runs nothing', async (method) => {
    const service = blog();
    const r = await call(service, method, '/posts?author=me', {
      headers: RAW,
      body: method === 'POST' || method === 'PATCH' ? { id: 3 } : undefined,
    });
    expect(r.status).toBe(400);
    if (method !== 'HEAD') {
      expect(r.json.ErrorCode).toBe('InvalidUriSyntax');
      expect(r.json.Message).toContain('/posts/author=me');
    }
    expect((await call(service, 'REPORT', '/posts', { headers: RAW })).json).toBe(2);
  });

  test('query-string conditions join those of the path', async () => {
    const r = await call(blog(), 'GET', '/posts/id=1?x=1');
    expect(r.json.Message).toContain('/posts/id=1&x=1');
  });

  test('an empty query string and a fragment are not a query string', async () => {
    expect((await call(blog(), 'GET', '/posts/id=1?', { headers: RAW })).json).toEqual([{ id: 1, author: 'me' }]);
    expect((await call(blog(), 'GET', '/posts/id=1#x', { headers: RAW })).json).toEqual([{ id: 1, author: 'me' }]);
  });

  test('an encoded ? is data', async () => {
    const service = createService();
    service.addResource({ name: 'notes', storage: new MemoryStorage([{ t: 'a?b' }]) });
    expect((await call(service, 'GET', '/notes/t=a%3Fb', { headers: RAW })).json).toEqual([{ t: 'a?b' }]);
  });
});

describe('the path form of json-server query strings', () => {
  test.each([
    ['/posts', 'author=typicode', '/posts/author=typicode'],
    ['/posts', 'title=a&author=b', '/posts/title=a&author=b'],
    ['/posts', 'views_gte=10&views_lte=20', '/posts/views>=10&views<=20'],
    ['/posts', 'views:gt=10&id:ne=1', '/posts/views>10&id!=1'],
    ['/posts', 'id_ne=1&views_lt=3', '/posts/id!=1&views<3'],
    ['/posts', '_sort=views&_order=desc', '/posts/_/order_desc=views'],
    ['/posts', '_sort=-views', '/posts/_/order_desc=views'],
    ['/posts', '_sort=views', '/posts/_/order_asc=views'],
    ['/posts', '_page=7&_limit=20', '/posts/_/offset=120&limit=20'],
    ['/posts', '_page=2&_per_page=5', '/posts/_/offset=5&limit=5'],
    ['/posts', '_start=20&_end=30', '/posts/_/offset=20&limit=10'],
    ['/posts', '_limit=10', '/posts/_/limit=10'],
    ['/posts', 'q=internet', '/posts/_/search=internet'],
    ['/posts', 'title_like=server', '/posts/_/search_regex=server,title'],
    ['/posts', 'author=me&_sort=views&_order=desc&_limit=5', '/posts/author=me/order_desc=views&limit=5'],
    ['/posts/id=1', 'x=1', '/posts/id=1&x=1'],
    ['/posts/_/limit=2', 'author=me', '/posts/author=me/limit=2'],
    ['/posts', '_embed=comments', '/posts/_/embed=comments'],
    ['/comments', '_expand=post&_embed=likes&_embed=likes', '/comments/_/embed=post,likes'],
    ['/posts', 'author=me&_embed=comments&_limit=2', '/posts/author=me/embed=comments&limit=2'],
    ['/posts', 'id=1&id=2', '/posts/id=1|2'],
    ['/posts', 'id=1&author=me&id=3', '/posts/id=1|3&author=me'],
    ['/posts', 'id:in=1,2,3&views:gt=5', '/posts/id=1|2|3&views>5'],
    ['/posts', '_sort=user,views&_order=desc,asc', '/posts/_/order_desc=user&order_asc=views'],
    ['/posts', '_sort=-user,-views,title', '/posts/_/order_desc=user,views&order_asc=title'],
    ['/posts', '_sort=a,b,c&_order=asc,desc,asc', '/posts/_/order_asc=a&order_desc=b'],
  ])('%s?%s -> %s', (path, query, expected) => {
    expect(pathFormOf(path, query)).toBe(expected);
  });
});
