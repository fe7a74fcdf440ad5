import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** Running the built CLI in tests: `serve` until it prints its URL, or any command to completion. */

export const ROOT = path.resolve(__dirname, '../../..');
export const CLI = path.join(ROOT, 'packages/cli/dist/cli.js');

export function requireBuiltCli(): void {
  if (!existsSync(CLI))
    throw new Error(`${path.relative(ROOT, CLI)} is missing: run \`pnpm build\` before jest (CI builds before it runs the tests)`);
}

export interface Running {
  proc: ChildProcess;
  url: string;
  /** Everything printed so far. */
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const running: ChildProcess[] = [];

/** Kills what a test left running (call from afterEach). */
export function killAll(): void {
  for (const proc of running.splice(0)) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
}

function exitOf(proc: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve({ code: proc.exitCode, signal: proc.signalCode });
    else proc.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** Starts the CLI with these arguments; resolves once the banner (ending in "Ctrl+C to stop" or the URL line with -q) is printed. */
export function start(args: string[], cwd = ROOT): Promise<Running> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(proc);
  const exited = exitOf(proc);
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (d) => {
      stderr += d;
    });
    proc.stdout!.on('data', (d) => {
      stdout += d;
      const url = /http:\/\/[^\s/]+/.exec(stdout)?.[0];
      if (url && (stdout.includes('Ctrl+C') || args.includes('-q'))) resolve({ proc, url, exited, output: () => stdout + stderr });
    });
    void exited.then(({ code }) => reject(new Error(`the CLI exited (${code}) before listening: ${stdout}${stderr}`)));
  });
}

/** Runs the CLI to completion. */
export function run(args: string[], cwd = ROOT): Promise<Finished> {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => {
    stdout += d;
  });
  proc.stderr!.on('data', (d) => {
    stderr += d;
  });
  return exitOf(proc).then(({ code }) => ({ code, stdout, stderr }));
}

/**
 * Resolves once the server has written its journal into the data file (it does so soon
 * after writes stop, and at stop); bounded at 10 s.
 */
export async function compacted(file: string): Promise<void> {
  for (let i = 0; i < 500 && existsSync(`${file}.journal`); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (existsSync(`${file}.journal`)) throw new Error(`${file}.journal was not written into ${file} within 10 s`);
}

export async function stop(server: Running): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  server.proc.kill('SIGTERM');
  return server.exited;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function request(
  server: Running,
  method: string,
  uri: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(server.url + uri, {
    method,
    headers: { accept: 'application/json;raw=true', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
