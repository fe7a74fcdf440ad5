import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { validateConfig } from '@resourcery/cli';
import { compacted, killAll, request, requireBuiltCli, run, start } from './cli-support';

/** resourcery.config.json / .mjs: what flags cannot say (issue 15 item 2). */

const DATA = {
  posts: [
    { id: 1, title: 'Hello', author: 'me', draft: false },
    { id: 2, title: 'Later', author: 'me', draft: true },
  ],
  profile: { name: 'Rosa' },
};

const CONFIG = {
  resources: {
    posts: {
      description: 'Blog posts',
      schema: {
        type: 'object',
        required: ['title'],
        properties: { id: { type: 'integer' }, title: { type: 'string' }, author: { type: 'string' }, draft: { type: 'boolean' } },
      },
      views: [{ name: 'published', conditions: 'draft=false', meta: 'order_asc=title' }],
    },
    profile: { readOnly: true },
  },
  apiKeys: [{ key: 'admin-key' }, { key: 'reader-key', allow: [{ resources: ['posts'], methods: ['GET', 'HEAD'] }] }],
  cors: { origins: ['https://app.example'] },
  limits: { maxBodyBytes: 200, maxNestingDepth: 3 },
};

let dir: string;
let file: string;

beforeAll(requireBuiltCli);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-config-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify(DATA));
});

afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

const as = (key: string) => ({ authorization: `apikey ${key}` });

describe('a resourcery.config.json in the working directory is read', () => {
  test('schema, views, read-only resources, keys with per-resource rights, CORS origins and limits apply', async () => {
    await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify(CONFIG));
    const server = await start(['serve', 'db.json', '-p', '0'], dir);
    const admin = as('admin-key');
    expect((await request(server, 'GET', '/posts')).status).toBe(401);
    expect((await request(server, 'POST', '/posts', { id: 3 }, admin)).status).toBe(400);
    expect((await request(server, 'POST', '/posts', { id: 3, title: 'Ok', draft: false }, admin)).status).toBe(201);
    expect((await request(server, 'GET', '/posts-published/_/select=title', undefined, admin)).json).toEqual([
      { title: 'Hello' },
      { title: 'Ok' },
    ]);
    expect((await request(server, 'PATCH', '/profile', { name: 'x' }, admin)).status).toBe(405);
    expect((await request(server, 'POST', '/posts', { title: 'x'.repeat(300) }, admin)).status).toBe(413);
    const deep = await request(server, 'POST', '/posts', { title: 'deep', a: { b: { c: { d: 1 } } } }, admin);
    expect(deep.status).toBe(400);
    expect(deep.text).toMatch(/3/);

    const reader = as('reader-key');
    expect((await request(server, 'GET', '/posts/id=1', undefined, reader)).json).toEqual([DATA.posts[0]]);
    expect((await request(server, 'POST', '/posts', { title: 'No' }, reader)).status).toBe(403);
    expect((await request(server, 'GET', '/profile', undefined, reader)).status).toBe(403);

    const preflight = (origin: string) => ({ origin, 'access-control-request-method': 'POST' });
    expect((await request(server, 'OPTIONS', '/posts', undefined, preflight('https://app.example'))).status).toBe(204);
    expect((await request(server, 'OPTIONS', '/posts', undefined, preflight('http://localhost:5173'))).status).toBe(403);
    expect(server.output()).toMatch(/CORS for https:\/\/app\.example/);
    await compacted(file);
    expect(JSON.parse(await readFile(file, 'utf8')).posts).toHaveLength(3);
  });

  test('a .mjs config (default export) given with --config; cors: false turns CORS off', async () => {
    const config = path.join(dir, 'my.config.mjs');
    await writeFile(config, 'export default { cors: false, resources: { posts: { readOnly: true } } };\n');
    const server = await start(['serve', file, '-p', '0', '--config', config]);
    expect((await request(server, 'POST', '/posts', { title: 'x' })).status).toBe(405);
    const pre = await request(server, 'OPTIONS', '/posts', undefined, {
      origin: 'http://localhost:1',
      'access-control-request-method': 'GET',
    });
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('limits.maxCausedRequests', () => {
  test('two webhooks feeding their own event stop at the bound: 1 + 4 inserts, the rest logged and recorded as InfiniteLoopDetected', async () => {
    await writeFile(file, JSON.stringify({ people: [{ name: 'seed' }] }));
    await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify({ limits: { maxCausedRequests: 4 } }));
    const server = await start(['serve', 'db.json', '-p', '0'], dir);
    for (const label of ['one', 'two'])
      expect(
        (
          await request(server, 'POST', '/Service.Admin.Webhook', {
            Destination: '/people',
            EventSelector: '/people.Inserted',
            Label: label,
          })
        ).status,
      ).toBe(201);
    expect((await request(server, 'POST', '/people', { name: 'Echo' })).status).toBe(201);
    // Every insert raises two deliveries: 4 are let through, 2 * 5 - 4 refused; nothing follows a refusal.
    const deadline = Date.now() + 10_000;
    let rows: Array<{ Success: boolean; Status: number; Error: string | null }> = [];
    while (rows.length < 10 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      rows = (await request(server, 'GET', '/Service.Admin.WebhookLog')).json ?? [];
    }
    expect((await request(server, 'REPORT', '/people/name=Echo')).json).toBe(5);
    expect(rows.filter((r) => r.Success)).toHaveLength(4);
    expect(rows.filter((r) => r.Status === 508 && /InfiniteLoopDetected/.test(r.Error ?? ''))).toHaveLength(6);
    expect((await request(server, 'REPORT', '/Service.Admin.Error/ErrorCode=InfiniteLoopDetected')).json).toBe(1);
  });
});

describe("limits.searchBudget and --search-budget: the characters one request's search may scan", () => {
  // 400 entities of about 1,000 characters: some 400,000 characters for a search over every property.
  const docs = { docs: Array.from({ length: 400 }, (_, i) => ({ id: i, text: `${'ab'.repeat(500)} ${i}` })) };
  const SEARCH = '/docs/_/search=ab%20399&select=id';

  test('a budget below what the search scans is a 400 naming the setting; a raised one answers, still per request', async () => {
    await writeFile(file, JSON.stringify(docs));
    await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify({ limits: { searchBudget: 100_000 } }));
    const small = await start(['serve', 'db.json', '-p', '0'], dir);
    const refused = await request(small, 'GET', SEARCH);
    expect([refused.status, refused.json.ErrorCode]).toEqual([400, 'InvalidMetaConditionValueType']);
    expect(refused.json.Message).toMatch(/at most 100000 characters .*limits\.searchBudget/);
    // A search the budget covers (a scope of one property and a limit scan less) still answers.
    expect((await request(small, 'GET', '/docs/id<10/search=ab%209&select=id')).json).toEqual([{ id: 9 }]);
    killAll();

    await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify({ limits: { searchBudget: 1_000_000 } }));
    const raised = await start(['serve', 'db.json', '-p', '0'], dir);
    expect((await request(raised, 'GET', SEARCH)).json).toEqual([{ id: 399 }]);
    killAll();

    // The flag wins over the config, and bounds each request alike.
    const flagged = await start(['serve', 'db.json', '-p', '0', '--search-budget', '100000'], dir);
    expect((await request(flagged, 'GET', SEARCH)).status).toBe(400);
    expect((await request(flagged, 'GET', SEARCH)).status).toBe(400);
  });

  test('a budget that is not a whole number is refused at start', async () => {
    await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify({ limits: { searchBudget: 'lots' } }));
    const r = await run(['serve', 'db.json', '-p', '0'], dir);
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/limits\.searchBudget: must be a whole number/)]);
    const flag = await run(['serve', 'db.json', '-p', '0', '--search-budget', '0'], dir);
    expect([flag.code, flag.stderr]).toEqual([2, expect.stringMatching(/--search-budget must be a whole number of characters/)]);
  });
});

describe('a config that cannot be used stops the start with every problem named (exit 2)', () => {
  test('all problems at once, each with its setting', async () => {
    await writeFile(
      path.join(dir, 'resourcery.config.json'),
      JSON.stringify({
        resource: {},
        resources: { posts: { key: 3, views: [{ conditions: 'a=1' }], schema: 'no' } },
        apiKeys: [{ key: '' }, { key: 'k', allow: [{ methods: ['FETCH'] }] }],
        cors: { origins: ['https://app.example/path'] },
        limits: { maxBodyBytes: -1 },
      }),
    );
    const r = await run(['serve', 'db.json', '-p', '0'], dir);
    expect(r.code).toBe(2);
    for (const problem of [
      /resourcery\.config\.json is not a valid config/,
      /resource: unknown setting/,
      /resources\.posts\.key: must be a property name \("id"\) or a list of them/,
      /resources\.posts\.views\[0\]: needs a "name"/,
      /resources\.posts\.schema: must be a JSON Schema object/,
      /apiKeys\[0\]: needs a non-empty "key"/,
      /apiKeys\[1\]\.allow\[0\]\.methods: 'FETCH' is not a method/,
      /cors\.origins: 'https:\/\/app\.example\/path' is not an origin/,
      /limits\.maxBodyBytes: must be a whole number/,
    ])
      expect(r.stderr).toMatch(problem);
    expect(r.stdout).toBe('');
  });

  test.each([
    [
      'a resource the file does not hold',
      { resources: { post: {} } },
      /describes 'post', which .*db\.json does not hold \(it holds posts, profile\)/,
    ],
    [
      'a view the core refuses',
      { resources: { posts: { views: [{ name: 'bad', meta: 'bogus=1' }] } } },
      /resources\.posts: View 'bad' of 'posts': Unknown meta-condition 'bogus'/,
    ],
    ['JSON that does not parse', '{"cors": ', /resourcery\.config\.json is not valid JSON/],
  ])('%s', async (_what, config, message) => {
    await writeFile(path.join(dir, 'resourcery.config.json'), typeof config === 'string' ? config : JSON.stringify(config));
    const r = await run(['serve', 'db.json', '-p', '0'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  test('--config naming a missing file', async () => {
    const r = await run(['serve', file, '--config', 'nope.json'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config file nope\.json does not exist/);
  });

  test('a .mjs config that throws', async () => {
    await writeFile(path.join(dir, 'resourcery.config.mjs'), 'throw new Error("boom");\n');
    const r = await run(['serve', 'db.json'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/resourcery\.config\.mjs could not be loaded: boom/);
  });
});

describe('validateConfig', () => {
  test('a valid config has no problems; a non-object has one', () => {
    expect(validateConfig(CONFIG)).toEqual([]);
    expect(validateConfig([])).toEqual([expect.stringMatching(/must be an object/)]);
  });

  test('indexes: names, lists of names and the full form; anything else is named', () => {
    const indexes = (value: unknown) => validateConfig({ resources: { posts: { indexes: value } } });
    expect(indexes(['views', ['author', 'views'], { properties: 'title', unique: true, ignoreCase: true }])).toEqual([]);
    expect(indexes('views')).toEqual([expect.stringMatching(/^resources\.posts\.indexes: must be an array/)]);
    expect(indexes(['a.b', [], { properties: 'x', unique: 'yes', sparse: true }, { unique: true }])).toEqual([
      expect.stringMatching(/^resources\.posts\.indexes\[0\]: must be a top-level property name/),
      expect.stringMatching(/^resources\.posts\.indexes\[1\]: must be/),
      'resources.posts.indexes[2].sparse: unknown setting (known: properties, unique, ignoreCase)',
      'resources.posts.indexes[2].unique: must be true or false',
      expect.stringMatching(/^resources\.posts\.indexes\[3\]\.properties: must be a top-level property name/),
    ]);
  });
});
