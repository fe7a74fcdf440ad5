#!/usr/bin/env node
import { parseCommand, USAGE, UsageError } from './args.js';
import { ConfigError } from './config.js';

/** The package's version, written in by the build (tsup.config.ts). */
declare const __RESOURCERY_VERSION__: string;

function version(): string {
  return __RESOURCERY_VERSION__;
}

async function main(argv: string[]): Promise<void> {
  let command;
  try {
    command = parseCommand(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`resourcery: ${e.message}\n${e.showUsage ? `\n${USAGE}` : 'Run resourcery --help for the usage.\n'}`);
    process.exitCode = 2;
    return;
  }
  switch (command.command) {
    case 'help':
      process.stdout.write(USAGE);
      return;
    case 'version':
      process.stdout.write(`${version()}\n`);
      return;
    case 'import': {
      // Loaded here, not above: --help, --version and usage errors answer without loading the service.
      const { importFile, openDatabase } = await import('./database.js');
      const { inferKey } = await import('./serve.js');
      const db = await openDatabase(command.options.database);
      try {
        const done = await importFile(command.options.file, db, inferKey);
        for (const { name, count } of done) process.stdout.write(`${name}: ${count} entit${count === 1 ? 'y' : 'ies'}\n`);
        // The label, not the URL as typed: output ends up in logs, so the password is never printed.
        const hidden = db.label !== command.options.database ? ' (your password in place of ***)' : '';
        process.stdout.write(`Imported ${command.options.file} into ${db.label}. Serve it with: resourcery serve ${db.label}${hidden}\n`);
      } finally {
        await db.close();
      }
      return;
    }
    case 'serve': {
      const { options } = command;
      const [{ loadConfig }, { banner, serve, stopOnHalt, stopOnSignals }] = await Promise.all([
        import('./config.js'),
        import('./serve.js'),
      ]);
      const { config } = await loadConfig(options.config);
      const served = await serve(options, config);
      // Ready means stoppable: a supervisor may signal as soon as it reads the banner.
      stopOnSignals(served);
      stopOnHalt(served);
      process.stdout.write(banner(served, options, config, version()));
    }
  }
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`resourcery: ${(e as Error).message}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
});
