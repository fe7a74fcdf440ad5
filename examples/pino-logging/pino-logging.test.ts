import { spawn } from 'node:child_process';
import path from 'node:path';

/** The example's stdout as pino writes it: one JSON object per line. */
test('pino logs one JSON line per request, with the request id, resource, status and durations', async () => {
  const child = spawn(process.execPath, [path.join(__dirname, 'server.mjs')], {
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  try {
    const origin = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => {
        const m = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
        if (m) resolve(m[0]);
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code} (run \`pnpm build\` first?):\n${output}`)));
    });
    expect((await fetch(`${origin}/api/Person/Age%3E50`, { headers: { 'x-request-id': 'req-1' } })).status).toBe(200);
    expect((await fetch(`${origin}/api/Nobody`)).status).toBe(404);
    const lines = () =>
      output
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request');
    while (lines().length < 2) await new Promise((r) => setTimeout(r, 20));
    const [first, second] = lines();
    expect(first).toMatchObject({ reqId: 'req-1', method: 'GET', uri: '/Person/Age%3E50', resource: 'Person', status: 200 });
    expect(first.durationMs).toEqual(expect.any(Number));
    expect(first.operationMs).toEqual(expect.any(Number));
    expect(second).toMatchObject({ method: 'GET', uri: '/Nobody', status: 404 });
    expect(second.reqId).toMatch(/^[0-9a-f-]{36}$/);
  } finally {
    child.kill('SIGTERM');
  }
});
