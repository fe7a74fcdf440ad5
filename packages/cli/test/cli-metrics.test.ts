import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseExposition, sample } from '../../core/test/metrics-support';
import { killAll, request, requireBuiltCli, run, start, type Running } from './cli-support';

/** --metrics-path and the config's metricsPath: Prometheus metrics of a real CLI server (docs/operations.md#metrics). */

let dir: string;
let file: string;

beforeAll(requireBuiltCli);
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'resourcery-metrics-'));
  file = path.join(dir, 'db.json');
  await writeFile(file, JSON.stringify({ posts: [{ id: 1, title: 'Hello' }] }));
});
afterEach(async () => {
  killAll();
  await rm(dir, { recursive: true, force: true });
});

async function scrape(server: Running, at = '/metrics') {
  const res = await fetch(`${server.url}${at}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(res.headers.get('cache-control')).toBe('no-store');
  return parseExposition(await res.text());
}

test('--metrics-path: requests counted by resource, method and status, before the API key and not counted itself', async () => {
  const server = await start(['serve', file, '-p', '0', '--api-key', 'k', '--metrics-path', '/metrics', '--ready-path', '/ready']);
  const key = { authorization: 'apikey k' };
  for (let i = 0; i < 3; i++) expect((await request(server, 'GET', '/posts/id=1', undefined, key)).status).toBe(200);
  expect((await request(server, 'POST', '/posts', { id: 2 }, key)).status).toBe(201);
  expect((await request(server, 'GET', '/nothing', undefined, key)).status).toBe(404);
  expect((await request(server, 'GET', '/posts')).status).toBe(401);
  await fetch(`${server.url}/ready`);
  const m = await scrape(server);
  const requests = m.samples.filter((s) => s.name === 'resourcery_requests_total');
  expect(requests.map((s) => [s.labels.resource, s.labels.method, s.labels.status, s.value])).toEqual([
    ['posts', 'GET', '200', 3],
    ['posts', 'POST', '201', 1],
    ['(none)', 'GET', '404', 1],
    ['(none)', 'GET', '401', 1],
  ]);
  expect(sample(m, 'resourcery_request_duration_seconds_count', { resource: 'posts', method: 'GET' })).toBe(3);
  expect(sample(m, 'resourcery_webhook_outbox_messages')).toBe(0);
  expect(sample(m, 'resourcery_event_stream_subscribers')).toBe(0);
  // The scrape and the probes are not requests of the service.
  const again = await scrape(server);
  expect(again.samples.filter((s) => s.name === 'resourcery_requests_total')).toEqual(requests);
  expect((await fetch(`${server.url}/metrics`, { method: 'HEAD' })).status).toBe(200);
  expect((await fetch(`${server.url}/metrics`, { method: 'POST' })).status).toBe(405);
});

test("off by default: /metrics is the service's (404 as an unknown resource)", async () => {
  const server = await start(['serve', file, '-p', '0']);
  expect((await request(server, 'GET', '/metrics')).status).toBe(404);
});

test("the config file's metricsPath, and the flag winning over it", async () => {
  await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify({ metricsPath: '/stats' }));
  const configured = await start(['serve', file, '-p', '0'], dir);
  await request(configured, 'GET', '/posts');
  expect(sample(await scrape(configured, '/stats'), 'resourcery_requests_total', { resource: 'posts' })).toBe(1);
  const flagged = await start(['serve', file, '-p', '0', '--metrics-path', '/m'], dir);
  await scrape(flagged, '/m');
  expect((await request(flagged, 'GET', '/stats')).status).toBe(404);
});

test('bad paths are refused', async () => {
  for (const [args, message] of [
    [['--metrics-path', 'metrics'], /--metrics-path must be a path such as \/metrics, not 'metrics'/],
    [['--metrics-path', '/x', '--ready-path', '/x'], /--metrics-path must differ/],
  ] as const) {
    const r = await run(['serve', file, '-p', '0', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  }
  await writeFile(path.join(dir, 'resourcery.config.json'), JSON.stringify({ metricsPath: 7 }));
  const r = await run(['serve', file, '-p', '0'], dir);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toMatch(/metricsPath: must be a path such as \/metrics, not 7/);
});
