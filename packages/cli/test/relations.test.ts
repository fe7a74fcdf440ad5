import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileService } from '@resourcery/cli';
import { inferRelations } from '../src/relations';

/** json-server's relations, inferred from the data file (docs/cli.md#relations). */

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
const DATA = {
  posts: [
    { id: 1, title: 'json-server', authorId: 2 },
    { id: 2, title: 'resourcery', authorId: 1 },
  ],
  comments: [
    { id: 3, body: 'nice', postId: 1 },
    { id: 1, body: 'some comment', postId: 1 },
    { id: 2, body: 'more', postId: 2 },
  ],
  authors: [
    { id: 1, name: 'ann' },
    { id: 2, name: 'bo' },
  ],
  categories: [{ id: 1, name: 'news' }],
  tags: [{ id: 1, categoryId: 1, postId: 9 }],
  profile: { name: 'typicode' },
};

let dir: string;
let opened: Awaited<ReturnType<typeof createFileService>> | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'resourcery-relations-'));
  const file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify(DATA));
  opened = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false });
});
afterEach(async () => {
  await opened?.store.close();
  await rm(dir, { recursive: true, force: true });
});

async function call(method: string, uri: string, body?: unknown) {
  const r = await opened!.service.handle({ method, uri, headers: RAW, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: r.body === null ? null : JSON.parse(String(r.body)) };
}

test('postId in comments: embed=comments on posts (_embed), embed=post on comments (_expand)', async () => {
  const posts = await call('GET', '/posts/_/embed=comments');
  expect(posts.body.map((p: { id: number; comments: Array<{ id: number }> }) => [p.id, p.comments.map((c) => c.id)])).toEqual([
    [1, [1, 3]],
    [2, [2]],
  ]);
  const comment = await call('GET', '/comments/3/embed=post');
  expect(comment.body).toEqual([{ id: 3, body: 'nice', postId: 1, post: DATA.posts[0] }]);
  const both = await call('GET', '/posts/1/embed=comments,author');
  expect(both.body[0].author).toEqual({ id: 2, name: 'bo' });
  expect((await call('GET', '/authors/_/embed=posts&select=name,posts.Length&add=posts.Length')).body).toEqual([
    { name: 'ann', 'posts.Length': 1 },
    { name: 'bo', 'posts.Length': 1 },
  ]);
  // categories (y -> ies) and a key held by no entity.
  expect((await call('GET', '/tags/_/embed=category,post')).body).toEqual([
    { id: 1, categoryId: 1, postId: 9, category: DATA.categories[0], post: null },
  ]);
  // Conditions through them.
  expect((await call('GET', '/posts/comments.body=more/select=id')).body).toEqual([{ id: 2 }]);
});

test('a nested route is 400 naming the condition form', async () => {
  const r = await call('GET', '/posts/1/comments');
  expect(r.status).toBe(400);
  expect(r.body.Message).toMatch(/\/comments\/postId=1/);
});

test('DELETE /posts/1 deletes its comments too, as json-server 0.17 does; the data file keeps neither', async () => {
  expect((await call('DELETE', '/posts/1')).status).toBe(200);
  expect((await call('GET', '/comments')).body).toEqual([{ id: 2, body: 'more', postId: 2 }]);
  // Only what relates to post 1: post 2 and its comment stay.
  expect((await call('GET', '/posts')).body.map((p: { id: number }) => p.id)).toEqual([2]);
  await opened!.store.close();
  const saved = JSON.parse(await readFile(path.join(dir, 'db.json'), 'utf8'));
  opened = undefined;
  expect(saved.posts.map((p: { id: number }) => p.id)).toEqual([2]);
  expect(saved.comments).toEqual([{ id: 2, body: 'more', postId: 2 }]);
});

test('inference: names taken by a property or with no keyed parent are left out', () => {
  const relations = inferRelations([
    { name: 'posts', key: 'id', sample: [{ id: 1, comments: 3 }] },
    { name: 'comments', key: 'id', sample: [{ id: 1, postId: 1, post: 'own' }] },
    { name: 'users', sample: [{ name: 'no key' }] },
    { name: 'likes', sample: [{ userId: 1, postId: 1 }] },
  ]);
  expect(Object.fromEntries(relations)).toEqual({
    likes: { post: { toOne: 'posts', via: 'postId', references: 'id' } },
    posts: { likes: { toMany: 'likes', via: 'postId', references: 'id', onDelete: 'cascade' } },
  });
});
