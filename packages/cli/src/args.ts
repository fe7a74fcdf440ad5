import { parseArgs } from 'node:util';
import type { AccessLogFormat } from './access-log.js';

/** A wrong invocation: the message says what was wrong; the CLI prints it and exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = false,
  ) {
    super(message);
  }
}

export interface ServeOptions {
  /** A JSON file, `postgres://...` / `postgresql://...` or `pglite:DIR`. */
  file: string;
  port: number;
  host: string;
  apiKeys: string[];
  allowPrivateDestinations: boolean;
  readOnly?: boolean;
  /** Files served under paths no resource answers (and `/` from `index.html`). */
  staticDir?: string;
  /** Origins allowed besides local dev servers; `false` turns CORS off. Default: local ones. */
  cors?: string[] | false;
  /** A config file; undefined looks for resourcery.config.mjs/.json in the working directory. */
  config?: string;
  quiet?: boolean;
  /** Log one line per request to stdout (the command line: text unless --quiet); omitted: no log. */
  accessLog?: AccessLogFormat;
  /** Reload the JSON file when it is edited outside the server. */
  watch?: boolean;
  /** Characters one request's search may scan (default: the config's limits.searchBudget, else 32 Mi): docs/limits.md. */
  searchBudget?: number;
  /** postgres://: connections of the pool (default: the config's database.poolSize, else 10). */
  poolSize?: number;
  /** postgres://: how long to wait at start for the server, in ms (default 30,000). */
  connectTimeoutMs?: number;
  /** A path answered 200 while the process answers (liveness; probes.ts). */
  livePath?: string;
  /** A path answered 200 or 503 from service.ready() (readiness; probes.ts). */
  readyPath?: string;
  /** A path answered with the service's Prometheus metrics (probes.ts); default: the config's metricsPath, else none. */
  metricsPath?: string;
}

export interface ImportOptions {
  file: string;
  database: string;
}

export type Command =
  | { command: 'help' }
  | { command: 'version' }
  | { command: 'serve'; options: ServeOptions }
  | { command: 'import'; options: ImportOptions };

export const USAGE = `Usage: resourcery serve <data.json> [options]
       resourcery serve <postgres://... | pglite:DIR> [options]
       resourcery import <data.json> <postgres://... | pglite:DIR>

serve   Serves every top-level array of a JSON file as a resource (a top-level object as a
        one-entity resource), with the full URI query language, macros, webhooks and error
        records. Changes are written back to the file. Given a database, serves its tables.
import  Copies every resource of a JSON file into a database, one table each.

Options of serve:
  -p, --port <n>                port to listen on (default 8080; 0 picks a free one)
  -H, --host <address>          address to listen on (default 127.0.0.1)
  --read-only                   answer GET, HEAD and REPORT only; the data is never written
  -s, --static <dir>            serve the files of <dir> (index.html at /) where no resource answers
  --api-key <key>               require this API key (repeatable; each key may do everything)
  --cors <origin>               also allow this origin (repeatable; '*' allows any); pages on
                                localhost, 127.0.0.1 and [::1] are allowed by default
  --no-cors                     answer no cross-origin request
  -w, --watch                   reload the JSON file when it is edited outside the server
  --config <file>               read this config file (default: resourcery.config.mjs or
                                resourcery.config.json in the working directory, if present)
  --allow-private-destinations  let webhooks, Source and Destination reach private addresses
  --search-budget <chars>       characters one request's search may scan (default 33554432,
                                about 300,000 small entities); more is a 400
  --pool-size <n>               postgres://: connections of the pool (default 10); every
                                instance's pool must fit PostgreSQL's max_connections
  --connect-timeout <seconds>   postgres://: wait this long at start for the server (default 30)
  --ready-path <path>           answer GET <path> 200 when the storage (the database) can
                                serve, else 503: a load balancer's readiness check
  --live-path <path>            answer GET <path> 200 while the process answers (liveness)
  --metrics-path <path>         answer GET <path> with Prometheus metrics (requests, latency,
                                webhooks, event streams); like the probes, without an API key
  --log <text|json>             the access log's format: one line per request on stdout
                                (default text)
  -q, --quiet                   print only the line with the URL (no access log)
  -h, --help                    show this help
  -v, --version                 print the version
`;

/** Reads the command line; throws a UsageError saying what is wrong with it. */
export function parseCommand(argv: string[]): Command {
  if (argv.length === 0) throw new UsageError('missing command', true);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        port: { type: 'string', short: 'p', default: '8080' },
        host: { type: 'string', short: 'H', default: '127.0.0.1' },
        'api-key': { type: 'string', multiple: true, default: [] as string[] },
        'allow-private-destinations': { type: 'boolean', default: false },
        'read-only': { type: 'boolean', default: false },
        static: { type: 'string', short: 's' },
        cors: { type: 'string', multiple: true, default: [] as string[] },
        'no-cors': { type: 'boolean', default: false },
        config: { type: 'string' },
        quiet: { type: 'boolean', short: 'q', default: false },
        log: { type: 'string', default: 'text' },
        watch: { type: 'boolean', short: 'w', default: false },
        'search-budget': { type: 'string' },
        'pool-size': { type: 'string' },
        'connect-timeout': { type: 'string' },
        'ready-path': { type: 'string' },
        'live-path': { type: 'string' },
        'metrics-path': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (e) {
    throw new UsageError(optionMessage(e as Error & { code?: string }));
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  if (values.version) return { command: 'version' };
  const [command, ...rest] = positionals;
  if (command === 'import') return { command: 'import', options: importOptions(rest, argv) };
  if (command !== 'serve') {
    if (command === undefined) throw new UsageError('missing command: resourcery serve <data.json>', true);
    if (/\.json$/i.test(command) || isDatabase(command))
      throw new UsageError(`missing command: did you mean 'resourcery serve ${command}'?`);
    throw new UsageError(`unknown command '${command}' (the commands are serve and import)`, true);
  }
  if (rest.length === 0) throw new UsageError('serve needs a data source: resourcery serve <data.json | postgres://... | pglite:DIR>');
  if (rest.length > 1)
    throw new UsageError(
      `serve takes one data source, not ${rest.length} (${rest.join(', ')}): put every resource in one file, or use a database`,
    );
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65535) throw new UsageError(`--port must be a number from 0 to 65535, not '${values.port}'`);
  if (values.host === '') throw new UsageError('--host needs an address, e.g. 127.0.0.1 or 0.0.0.0');
  if (values['no-cors'] && values.cors.length > 0) throw new UsageError('--cors and --no-cors contradict each other: give one of them');
  if (values.log !== 'text' && values.log !== 'json') throw new UsageError(`--log must be text or json, not '${values.log}'`);
  const pool = values['pool-size'];
  const poolSize = pool === undefined ? undefined : Number(pool);
  if (pool !== undefined && (!/^\d+$/.test(pool) || Number(pool) < 1))
    throw new UsageError(`--pool-size must be a whole number of at least 1, not '${pool}'`);
  const budget = values['search-budget'];
  if (budget !== undefined && (!/^\d+$/.test(budget) || Number(budget) < 1))
    throw new UsageError(`--search-budget must be a whole number of characters of at least 1, not '${budget}'`);
  const connect = values['connect-timeout'];
  if (connect !== undefined && !/^\d+(\.\d+)?$/.test(connect))
    throw new UsageError(`--connect-timeout must be a number of seconds, not '${connect}'`);
  for (const flag of ['ready-path', 'live-path', 'metrics-path'] as const) {
    const probe = values[flag];
    if (probe !== undefined && !isProbePath(probe))
      throw new UsageError(`--${flag} must be a path such as /${flag.split('-')[0]}, not '${probe}'`);
  }
  if (values['ready-path'] !== undefined && values['ready-path'] === values['live-path'])
    throw new UsageError('--ready-path and --live-path must be two paths');
  const metricsPath = values['metrics-path'];
  if (metricsPath !== undefined && (metricsPath === values['ready-path'] || metricsPath === values['live-path']))
    throw new UsageError('--metrics-path must differ from --ready-path and --live-path');
  return {
    command: 'serve',
    options: {
      file: rest[0],
      port,
      host: values.host,
      apiKeys: values['api-key'],
      allowPrivateDestinations: values['allow-private-destinations'],
      readOnly: values['read-only'],
      staticDir: values.static,
      cors: values['no-cors'] ? false : values.cors.length > 0 ? values.cors : undefined,
      config: values.config,
      quiet: values.quiet,
      accessLog: values.quiet ? undefined : values.log,
      watch: values.watch,
      searchBudget: budget === undefined ? undefined : Number(budget),
      poolSize,
      connectTimeoutMs: connect === undefined ? undefined : Number(connect) * 1000,
      readyPath: values['ready-path'],
      livePath: values['live-path'],
      metricsPath,
    },
  };
}

/** A path the CLI answers itself (--ready-path, --live-path, --metrics-path): absolute, no query, no space. */
export function isProbePath(path: string): boolean {
  return /^\/[^?#\s]*$/.test(path);
}

/** `serve` only: kept for callers of the earlier API. */
export function parseServeArgs(argv: string[]): ServeOptions {
  const parsed = parseCommand(argv);
  if (parsed.command !== 'serve') throw new UsageError(USAGE);
  return parsed.options;
}

function importOptions(rest: string[], argv: string[]): ImportOptions {
  const given = argv.filter((a) => a.startsWith('-'));
  if (given.length > 0) throw new UsageError(`import takes no options (got ${given.join(' ')})`);
  if (rest.length !== 2)
    throw new UsageError(
      `import needs a JSON file and a database: resourcery import <data.json> <postgres://... | pglite:DIR> (got ${rest.length} argument${rest.length === 1 ? '' : 's'})`,
    );
  const [file, database] = rest;
  if (!isDatabase(database)) throw new UsageError(`'${database}' is not a database: give postgres://..., postgresql://... or pglite:DIR`);
  return { file, database };
}

export function isDatabase(source: string): boolean {
  return /^(postgres|postgresql|pglite):/i.test(source);
}

/** parseArgs' messages, rewritten to say what to do. */
function optionMessage(e: Error & { code?: string }): string {
  const option = /'([^']+)'/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option '${option}' (resourcery --help lists the options)`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return `option '${option?.replace(/^-\w, /, '').replace(/ <value>$/, '')}' needs a value`;
    default:
      return e.message;
  }
}
