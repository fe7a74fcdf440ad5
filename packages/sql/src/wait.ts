import type { SqlClient } from './client.js';
import { unavailable } from './unavailable.js';

export interface WaitOptions {
  /** Give up after this long (default 30,000 ms): the last error is thrown then. */
  timeoutMs?: number;
  /** Told before each wait: why the database did not answer, and how long until the next try. */
  onWait?: (reason: string, retryInMs: number) => void;
}

/**
 * Resolves once the database answers `SELECT 1`, trying again with a growing delay (0.25 s,
 * doubled up to 5 s) while it is unavailable (refused, starting, shutting down, out of
 * connections: unavailable.ts), for at most `timeoutMs`. Any other error (a wrong password,
 * a missing database) is thrown at once. For start-up: `serve postgres://` waits so, and an
 * app can before it listens (docs/deployment.md).
 */
export async function waitForDatabase(client: SqlClient, options: WaitOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      await client.query('SELECT 1');
      return;
    } catch (e) {
      const outage = unavailable(e);
      const left = deadline - Date.now();
      if (outage === null || left <= 0) throw e;
      const wait = Math.min(delay, left);
      options.onWait?.(outage.message.replace(/^The database is unavailable: /, '').replace(/\. Try again.*$/, ''), wait);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
