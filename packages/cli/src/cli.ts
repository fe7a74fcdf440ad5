#!/usr/bin/env node
import { parseServeArgs, serve, stopOnSignals, USAGE } from './serve.js';

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    process.stdout.write(USAGE);
    return;
  }
  let options;
  try {
    options = parseServeArgs(argv);
  } catch (e) {
    process.stderr.write(`${(e as Error).message.trimEnd()}\n`);
    process.exitCode = 2;
    return;
  }
  const { service, server, url, store } = await serve(options);
  // Ready means stoppable: a supervisor may signal as soon as it reads the line below.
  stopOnSignals(server, service, store);
  process.stdout.write(`Resourcery is serving ${options.file} at ${url}\n`);
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`resourcery: ${(e as Error).message}\n`);
  process.exit(1);
});
