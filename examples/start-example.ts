import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface RunningExample {
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  stop(): Promise<void>;
}

/**
 * Runs an example as a reader would (`node examples/<dir>/server.mjs`, on the built
 * packages) with PORT=0, and resolves once it prints its http://127.0.0.1:<port> line.
 */
export function startExample(file: string, env: Record<string, string> = {}): Promise<RunningExample> {
  const child = spawn(process.execPath, [path.join(__dirname, file)], {
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
      if (m) resolve({ origin: m[0], stop: () => stop(child) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code} before listening (run \`pnpm build\` first?):\n${output}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    // An example that ignores SIGTERM must not hang the test run.
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** The `Data` of a success envelope. */
export async function envelopeData(res: Response): Promise<Array<Record<string, unknown>>> {
  return ((await res.json()) as { Data: Array<Record<string, unknown>> }).Data;
}
