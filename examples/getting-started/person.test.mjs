// person.test.mjs (docs/getting-started.md): `node --test examples/getting-started/person.test.mjs` after `pnpm build`
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createService } from '@resourcery/core';

function makeService() {
  const service = createService();
  service.addResource({ name: 'Person' });
  return service;
}

test('a POSTed person can be found by age', async () => {
  const service = makeService();
  const post = await service.handle({
    method: 'POST',
    uri: '/Person',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ Name: 'Ada', Age: 36 }),
  });
  assert.equal(post.status, 201);

  const get = await service.handle({
    method: 'GET',
    uri: '/Person/Age>30/select=Name',
    headers: { accept: 'application/json;raw=true' },
  });
  assert.equal(get.status, 200);
  assert.deepEqual(JSON.parse(get.body), [{ Name: 'Ada' }]);
});

test('nothing found is 204 with no body', async () => {
  const res = await makeService().handle({ method: 'GET', uri: '/Person/Age>30' });
  assert.equal(res.status, 204);
  assert.equal(res.body, null);
});
