#!/usr/bin/env node
import { parseServeArgs, serve, USAGE } from './serve.js';

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
  const stop = () => {
    server.close();
    server.closeAllConnections();
    // A save in progress finishes first, so no temp file is left behind.
    void service.close().then(() => store.idle()).finally(() => process.exit(0));
  };
  // Ready means stoppable: a supervisor may signal as soon as it reads the line below.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  process.stdout.write(`Resourcery is serving ${options.file} at ${url}\n`);
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`resourcery: ${(e as Error).message}\n`);
  process.exit(1);
});
