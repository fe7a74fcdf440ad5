import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startExample, type RunningExample } from '../start-example';

/** docs/getting-started.md's app.mjs and person.test.mjs, run as a reader runs them. */

let example: RunningExample;
beforeAll(async () => {
  example = await startExample('getting-started/app.mjs');
});
afterAll(() => example.stop());

test("app.mjs serves Person: the guide's POST, condition and validation error", async () => {
  const post = await fetch(`${example.origin}/Person`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([
      { Id: 1, Name: 'Ada', Age: 36 },
      { Id: 2, Name: 'Alan', Age: 41 },
    ]),
  });
  expect(post.status).toBe(201);
  const older = await fetch(`${example.origin}/Person/Age%3E40`, { headers: { accept: 'application/json;raw=true' } });
  expect(await older.json()).toEqual([{ Id: 2, Name: 'Alan', Age: 41 }]);
  const invalid = await fetch(`${example.origin}/Person`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"Id":3,"Age":-1}',
  });
  expect(((await invalid.json()) as { ErrorCode: string }).ErrorCode).toBe('InvalidResourceEntity');
});

test('person.test.mjs passes under node --test, run from the repository root', () => {
  const run = spawnSync(process.execPath, ['--test', path.join('examples', 'getting-started', 'person.test.mjs')], {
    cwd: path.join(__dirname, '..', '..'),
    encoding: 'utf8',
  });
  expect(run.stdout).toMatch(/# pass 2/);
  expect(run.status).toBe(0);
});
