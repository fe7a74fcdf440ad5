import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { compacted, killAll, request, requireBuiltCli, ROOT, run, start } from './cli-support';

/** The CLI's flags, wrong invocations, banner, CORS, singular resources and --static (issue 15). */

const DATA = {
  posts: [
    { id: 1, title: 'Hello', author: 'me' },
    { id: 2, title: 'Again', author: 'you' },
  ],
  profile: { name: 'Rosa', city: 'Lyon' },
};

let dir: string;
let file: string;

beforeAll(requireBuiltCli);

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-flags-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify(DATA));
});

afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

/** The file once the server has written its journal into it. */
const onDisk = async () => {
  await compacted(file);
  return JSON.parse(await readFile(file, 'utf8'));
};

describe('--version, --help', () => {
  test.each([['--version'], ['-v']])('%s prints the package version and exits 0', async (flag) => {
    const { version } = JSON.parse(await readFile(path.join(ROOT, 'packages/cli/package.json'), 'utf8'));
    const r = await run([flag]);
    expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  test('--help lists every option', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const option of [
      '-p, --port',
      '-H, --host',
      '--read-only',
      '--static',
      '--cors',
      '--no-cors',
      '--config',
      '--api-key',
      '--ready-path',
      '--live-path',
      '--metrics-path',
      'resourcery import',
    ])
      expect(r.stdout).toContain(option);
  });
});

describe('every wrong invocation says what was wrong and exits 2', () => {
  test.each([
    ['no arguments', [], /missing command[\s\S]*Usage/],
    ['a file without serve', ['db.json'], /missing command: did you mean 'resourcery serve db\.json'\?/],
    ['an unknown command', ['serev', 'db.json'], /unknown command 'serev'[\s\S]*Usage/],
    ['serve without a file', ['serve'], /serve needs a data source/],
    ['two files', ['serve', 'a.json', 'b.json'], /serve takes one data source, not 2 \(a\.json, b\.json\)/],
    ['an unknown option', ['serve', 'db.json', '--prot', '3000'], /unknown option '--prot' \(resourcery --help lists the options\)/],
    ['an option without its value', ['serve', 'db.json', '--port'], /option '--port' needs a value/],
    ['a port that is no number', ['serve', 'db.json', '-p', 'seven'], /--port must be a number from 0 to 65535, not 'seven'/],
    ['a port out of range', ['serve', 'db.json', '--port', '70000'], /--port must be a number/],
    ['--cors with --no-cors', ['serve', 'db.json', '--cors', 'https://a.example', '--no-cors'], /contradict/],
    ['import with one argument', ['import', 'db.json'], /import needs a JSON file and a database/],
    ['import into a file', ['import', 'db.json', 'out.json'], /'out\.json' is not a database/],
  ])('%s', async (_what, args, message) => {
    const r = await run(args as string[], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/TypeError|ERR_PARSE_ARGS|at .*\.js:\d+/);
    expect(r.stdout).toBe('');
  });

  test('a port in use: exit 1 with a hint', async () => {
    const first = await start(['serve', file, '--port', '0']);
    const port = new URL(first.url).port;
    const r = await run(['serve', file, '--port', port]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`port ${port} is already in use on 127\\.0\\.0\\.1: .*--port <n>`));
  });
});

describe('-p, -H and the banner', () => {
  test('short flags; the banner lists each resource URL and marks one-entity resources', async () => {
    const server = await start(['serve', file, '-p', '0', '-H', '127.0.0.1']);
    const out = server.output();
    expect(out).toMatch(/^Resourcery \d+\.\d+\.\d+\S* is serving .*db\.json at http:\/\/127\.0\.0\.1:\d+\n/);
    expect(out).toContain(`  ${server.url}/posts\n`);
    expect(out).toMatch(new RegExp(`  ${server.url}/profile +\\(one entity\\)`));
    expect(out).toMatch(/CORS for localhost pages/);
    expect((await request(server, 'GET', '/posts/id=2')).json).toEqual([DATA.posts[1]]);
  });

  test('-q prints only the URL line', async () => {
    const server = await start(['serve', file, '-p', '0', '-q']);
    await new Promise((r) => setTimeout(r, 100));
    expect(server.output().trim().split('\n')).toHaveLength(1);
  });
});

describe('a top-level object is a one-entity resource', () => {
  test('GET answers it; PATCH and PUT change it and it is saved back as an object; POST and DELETE are 405', async () => {
    const server = await start(['serve', file, '-p', '0']);
    expect((await request(server, 'GET', '/profile')).json).toEqual([DATA.profile]);
    expect((await request(server, 'PATCH', '/profile', { city: 'Nice' })).status).toBe(200);
    expect((await onDisk()).profile).toEqual({ name: 'Rosa', city: 'Nice' });
    expect((await request(server, 'PUT', '/profile', { name: 'Ana' })).status).toBe(200);
    expect((await onDisk()).profile).toMatchObject({ name: 'Ana' });
    expect((await request(server, 'POST', '/profile', { name: 'Two' })).status).toBe(405);
    expect((await request(server, 'DELETE', '/profile/_/unsafe=true')).status).toBe(405);
    expect((await onDisk()).posts).toEqual(DATA.posts);
  });
});

describe('--read-only', () => {
  test('reads are served; writes (data, macros) are 405 and the file never changes', async () => {
    const before = await readFile(file, 'utf8');
    const server = await start(['serve', file, '-p', '0', '--read-only']);
    expect(server.output()).toMatch(/read-only/);
    expect((await request(server, 'GET', '/posts/author=me')).json).toEqual([DATA.posts[0]]);
    expect((await request(server, 'REPORT', '/posts')).json).toBe(2);
    expect((await request(server, 'POST', '/posts', { id: 3 })).status).toBe(405);
    expect((await request(server, 'PATCH', '/posts/id=1', { title: 'x' })).status).toBe(405);
    expect((await request(server, 'DELETE', '/posts/id=1')).status).toBe(405);
    expect((await request(server, 'PATCH', '/profile', { city: 'x' })).status).toBe(405);
    expect((await request(server, 'POST', '/Service.Admin.Macro', { Name: 'm', Uri: '/posts' })).status).toBe(405);
    expect(await readFile(file, 'utf8')).toBe(before);
  });
});

describe('--static DIR', () => {
  test('serves index.html at / and files by path; resources still answer; nothing outside DIR', async () => {
    const site = path.join(dir, 'public');
    await mkdir(path.join(site, 'js'), { recursive: true });
    await writeFile(path.join(site, 'index.html'), '<h1>home</h1>');
    await writeFile(path.join(site, 'js', 'app.js'), 'console.log(1)');
    const server = await start(['serve', file, '-p', '0', '--static', site]);
    const home = await fetch(`${server.url}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/text\/html/);
    expect(await home.text()).toBe('<h1>home</h1>');
    const js = await fetch(`${server.url}/js/app.js`);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(await js.text()).toBe('console.log(1)');
    expect((await request(server, 'GET', '/posts/id=1')).json).toEqual([DATA.posts[0]]);
    const escape = await fetch(`${server.url}/..%2Fdb.json`);
    expect(escape.status).not.toBe(200);
    expect(await escape.text()).not.toContain('Hello');
  });

  test('revalidation (304), byte ranges (206, 416), index.html of a folder, dotfiles hidden, a folder named like a resource leaves it to the service', async () => {
    const site = path.join(dir, 'public');
    await mkdir(path.join(site, 'docs'), { recursive: true });
    await mkdir(path.join(site, 'posts'), { recursive: true });
    await writeFile(path.join(site, 'app.txt'), '0123456789');
    await writeFile(path.join(site, 'docs', 'index.html'), '<h1>docs</h1>');
    await writeFile(path.join(site, '.env'), 'SECRET=1');
    const server = await start(['serve', file, '-p', '0', '--static', site]);
    const first = await fetch(`${server.url}/app.txt`);
    expect(await first.text()).toBe('0123456789');
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    // fetch adds `cache-control: no-cache` to a conditional request unless it has its own;
    // a browser revalidating sends max-age=0.
    const again = await fetch(`${server.url}/app.txt`, { headers: { 'if-none-match': String(etag), 'cache-control': 'max-age=0' } });
    expect(again.status).toBe(304);
    const since = await fetch(`${server.url}/app.txt`, {
      headers: { 'if-modified-since': String(first.headers.get('last-modified')), 'cache-control': 'max-age=0' },
    });
    expect(since.status).toBe(304);
    const part = await fetch(`${server.url}/app.txt`, { headers: { range: 'bytes=2-4' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 2-4/10');
    expect(await part.text()).toBe('234');
    const suffix = await fetch(`${server.url}/app.txt`, { headers: { range: 'bytes=-3' } });
    expect(await suffix.text()).toBe('789');
    const outside = await fetch(`${server.url}/app.txt`, { headers: { range: 'bytes=50-60' } });
    expect(outside.status).toBe(416);
    const index = await fetch(`${server.url}/docs/`);
    expect(index.status).toBe(200);
    expect(await index.text()).toBe('<h1>docs</h1>');
    const dotfile = await fetch(`${server.url}/.env`);
    expect(await dotfile.text()).not.toContain('SECRET');
    // public/posts is a folder without index.html: /posts is still the resource.
    const posts = await request(server, 'GET', '/posts');
    expect(posts.status).toBe(200);
    expect(posts.json).toEqual(DATA.posts);
  });

  test('a directory that does not exist stops the start', async () => {
    const r = await run(['serve', file, '-p', '0', '--static', path.join(dir, 'nope')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--static .*nope: no such directory/);
  });

  test('-s is --static, as in json-server', async () => {
    const r = await run(['serve', file, '-p', '0', '-s', path.join(dir, 'nope-s')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--static .*nope-s: no such directory/);
  });
});

describe('--ready-path, --live-path', () => {
  test('answered before the service, without an API key: 200 ready over a file, 200 live; GET and HEAD only; bad paths refused', async () => {
    const server = await start(['serve', file, '-p', '0', '--api-key', 'k', '--ready-path', '/readyz', '--live-path', '/livez']);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get('cache-control')).toBe('no-store');
    expect(await ready.json()).toMatchObject({ ready: true });
    expect((await fetch(`${server.url}/livez?probe=1`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`, { method: 'POST' })).status).toBe(405);
    // Every other path is the service's, with its API key.
    expect((await fetch(`${server.url}/posts`)).status).toBe(401);
    for (const [flags, message] of [
      [['--ready-path', 'ready'], /--ready-path must be a path such as \/ready, not 'ready'/],
      [['--live-path', '/a?b'], /--live-path must be a path/],
      [['--ready-path', '/x', '--live-path', '/x'], /must be two paths/],
    ] as const) {
      const r = await run(['serve', file, '-p', '0', ...flags]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});

describe('CORS is on for local dev servers by default', () => {
  const preflight = (origin: string) => ({
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type',
  });

  test('a page on localhost:5173 may preflight and write; another origin may not', async () => {
    const server = await start(['serve', file, '-p', '0']);
    const pre = await request(server, 'OPTIONS', '/posts', undefined, preflight('http://localhost:5173'));
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const post = await request(server, 'POST', '/posts', { id: 3, title: 'From Vite' }, { origin: 'http://localhost:5173' });
    expect(post.status).toBe(201);
    expect(post.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(post.headers.get('access-control-expose-headers')).toMatch(/ErrorInfo/);
    expect((await request(server, 'OPTIONS', '/posts', undefined, preflight('https://evil.example'))).status).toBe(403);
    expect((await request(server, 'POST', '/posts', 'id=4', { origin: 'https://evil.example', 'content-type': 'text/plain' })).status).toBe(
      403,
    );
    expect((await onDisk()).posts).toHaveLength(3);
  });

  test('--cors adds an origin', async () => {
    const server = await start(['serve', file, '-p', '0', '--cors', 'https://app.example']);
    expect((await request(server, 'OPTIONS', '/posts', undefined, preflight('https://app.example'))).status).toBe(204);
    expect((await request(server, 'OPTIONS', '/posts', undefined, preflight('http://localhost:3000'))).status).toBe(204);
  });

  test('--no-cors: a preflight is refused and no Access-Control header is sent', async () => {
    const server = await start(['serve', file, '-p', '0', '--no-cors']);
    expect(server.output()).toMatch(/CORS off/);
    expect((await request(server, 'OPTIONS', '/posts', undefined, preflight('http://localhost:5173'))).status).toBe(403);
    expect(
      (await request(server, 'GET', '/posts', undefined, { origin: 'http://localhost:5173' })).headers.get('access-control-allow-origin'),
    ).toBeNull();
  });
});

describe('on loopback, only local host names are answered (DNS rebinding)', () => {
  /** fetch sets Host itself; node:http lets the test send another name, as a rebound page would. */
  function withHost(url: string, host: string): Promise<{ status: number; body: string }> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const req = http.request({ hostname, port, path: '/posts/id=1', headers: { host, accept: 'application/json;raw=true' } }, (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('Host evil.example is 403 and reads nothing; localhost, 127.0.0.1 and [::1] are served, with --no-cors too', async () => {
    for (const args of [[], ['--no-cors']]) {
      const server = await start(['serve', file, '-p', '0', ...args]);
      const port = new URL(server.url).port;
      const evil = await withHost(server.url, `evil.example:${port}`);
      expect(evil.status).toBe(403);
      expect(evil.body).toMatch(/Host 'evil\.example:\d+' is not one this service answers to/);
      expect(evil.body).not.toContain('Hello');
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost'])
        expect((await withHost(server.url, host)).status).toBe(200);
    }
  });

  test('cors.hosts in the config adds a name', async () => {
    await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify({ cors: { hosts: ['myapp.test'] } }));
    const server = await start(['serve', 'db.json', '-p', '0'], dir);
    expect((await withHost(server.url, 'myapp.test:8080')).status).toBe(200);
    expect((await withHost(server.url, 'other.test')).status).toBe(403);
  });

  test('listening on every interface (--host 0.0.0.0), any host name is answered', async () => {
    const server = await start(['serve', file, '-p', '0', '-H', '0.0.0.0']);
    const url = server.url.replace('localhost', '127.0.0.1');
    expect((await withHost(url, 'my-laptop.lan')).status).toBe(200);
  });
});
