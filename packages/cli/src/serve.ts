import { stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import {
  createService,
  ServiceError,
  type Entity,
  type Method,
  type RelationDefinition,
  type ResourceDefinition,
  type Service,
  type ServiceOptions,
  type Storage,
} from '@resourcery/core';
import { createNodeListener } from '@resourcery/node';
import { createServer as createHttpServer } from 'node:http';
import { isDatabase, type ServeOptions } from './args.js';
import { ConfigError, type CliConfig } from './config.js';
import type { Database } from './database.js';
import { FileStore, type FileStoreOptions } from './file-store.js';
import { staticFiles } from './static-files.js';
import { accessLogger } from './access-log.js';
import { redact } from './redact.js';
import { probes } from './probes.js';
import { inferRelations, SAMPLED } from './relations.js';

export { parseServeArgs, USAGE, type ServeOptions } from './args.js';

/** A resource as the banner lists it. */
export interface ServedResource {
  name: string;
  /** A top-level object of the file: one entity. */
  singular: boolean;
}

export interface Served {
  service: Service;
  server: http.Server;
  url: string;
  resources: ServedResource[];
  /** Stops accepting requests, closes the service, then waits for pending writes and writes the journal into the file. */
  close(): Promise<void>;
  /** Present when serving a file. */
  store?: FileStore;
}

const READ: Method[] = ['GET', 'HEAD', 'REPORT'];
/** A one-entity resource is read and changed, never added to or emptied. */
const SINGULAR: Method[] = ['GET', 'HEAD', 'REPORT', 'PUT', 'PATCH'];

type SourceOptions = Pick<ServeOptions, 'apiKeys' | 'allowPrivateDestinations'> &
  Partial<Pick<ServeOptions, 'readOnly' | 'cors' | 'host' | 'searchBudget'>>;

function isLoopback(host: string): boolean {
  return /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i.test(host);
}

/** The service options that flags and the config file give. */
function serviceOptions(options: SourceOptions, config: CliConfig, adminStorage: ServiceOptions['adminStorage']): ServiceOptions {
  const origins = corsOrigins(options, config);
  const configured = typeof config.cors === 'object' ? config.cors : {};
  // On loopback only local host names are answered (DNS rebinding), with CORS off too.
  const hosts = options.host !== undefined && isLoopback(options.host) ? ['local', ...(configured.hosts ?? [])] : configured.hosts;
  const cors = origins === false && hosts === undefined ? false : { ...configured, origins: origins === false ? [] : origins, hosts };
  return {
    apiKeys: [...options.apiKeys.map((key) => ({ key })), ...(config.apiKeys ?? [])],
    allowPrivateDestinations: options.allowPrivateDestinations,
    // Only the limits the config sets: an absent one keeps the service's default.
    ...config.limits,
    ...(options.searchBudget === undefined ? {} : { searchBudget: options.searchBudget }),
    cors,
    adminStorage: options.readOnly ? readOnlyAdmin(adminStorage) : adminStorage,
  };
}

/** The origins allowed: the config's (default: local dev servers) plus --cors; false when off. */
export function corsOrigins(options: Pick<ServeOptions, 'cors'>, config: CliConfig): string[] | false {
  if (options.cors === false || config.cors === false) return false;
  return [...((typeof config.cors === 'object' ? config.cors.origins : undefined) ?? ['local']), ...(options.cors ?? [])];
}

/** --read-only: macros and webhooks stay readable, and refuse changes like the resources do. */
function readOnlyAdmin(adminStorage: ServiceOptions['adminStorage']): ServiceOptions['adminStorage'] {
  return (name) => {
    const key = name.toLowerCase();
    // Pending webhook deliveries would be written as they go out: they wait for a writable start.
    if (key === 'service.admin.webhookoutbox') return undefined;
    const storage = adminStorage?.(name);
    if (storage === undefined || key === 'service.admin.error') return storage;
    return {
      select: (q) => storage.select(q),
      count: storage.count ? (q) => storage.count!(q) : undefined,
      // The rows' own versions, so ETags agree with writable instances over the same data.
      stamp: storage.stamp ? (e) => storage.stamp!(e) : undefined,
      write: () => Promise.reject(new ServiceError('MethodNotAllowed', 'The server runs with --read-only: nothing can be changed')),
    };
  };
}

/** Declares the resources with what the config file says of them. */
function addResources(
  service: Service,
  resources: ServedResource[],
  storage: (name: string) => Storage,
  config: CliConfig,
  readOnly: boolean,
  inferKey: (name: string) => string | undefined = () => undefined,
  sample?: (name: string) => readonly Entity[],
): Map<string, ResourceDefinition['key']> {
  const keys = new Map<string, ResourceDefinition['key']>();
  const definitions = resources.map(({ name, singular }) => {
    const settings = configFor(config, name) ?? {};
    const definition: ResourceDefinition = {
      name,
      storage: storage(name),
      description: settings.description ?? (singular ? `${name} (one entity)` : undefined),
      schema: settings.schema,
      views: settings.views,
      indexes: settings.indexes,
      key: settings.key ?? (singular ? undefined : inferKey(name)),
    };
    return { name, singular, settings, definition };
  });
  // json-server's relations (postId in comments -> posts), among the resources of many entities.
  const relations =
    sample === undefined
      ? new Map<string, Record<string, RelationDefinition>>()
      : inferRelations(
          definitions
            .filter((d) => !d.singular)
            .map(({ name, definition }) => ({
              name,
              key: definition.key,
              declared: Object.keys((definition.schema as { properties?: object } | undefined)?.properties ?? {}),
              sample: sample(name),
            })),
        );
  for (const { name, singular, settings, definition } of definitions) {
    const related = relations.get(name);
    if (related !== undefined) definition.relations = related;
    if (readOnly || settings.readOnly) definition.methods = READ;
    else if (singular) {
      definition.methods = SINGULAR;
      // It always holds its one entity: it is updated, never inserted into or deleted from.
      definition.events = ['Updated'];
      // A PUT whose conditions miss the entity would insert a second one: 404, as a PATCH that matches nothing.
      definition.hooks = {
        beforeWrite: (entity, change) => {
          if (change.operation === 'insert')
            throw new ServiceError('NotFound', `'${name}' holds one entity, which these conditions do not match; PUT and PATCH update it`);
          return entity;
        },
      };
    }
    try {
      service.addResource(definition);
    } catch (e) {
      // A view or schema the config file gives that the core refuses: name the setting.
      throw new ConfigError(`resources.${name}: ${(e as Error).message}`);
    }
    keys.set(name, definition.key);
  }
  return keys;
}

/**
 * The key json-server users expect: `id` (or `Id`) when every entity has one and no two
 * share it; `id` for an empty resource, so the first POST gets id 1. Otherwise none (the
 * config file's `key` names another).
 */
export function inferKey(entities: readonly Entity[], uniqueIn?: (property: string) => boolean): string | undefined {
  if (entities.length === 0) return 'id';
  for (const name of ['id', 'Id', 'ID']) {
    if (entities[0][name] === undefined) continue;
    // The file store's equality index, built once here, tells uniqueness without a Set of every value (the key's index is needed anyway).
    if (uniqueIn !== undefined && entities.every((e) => typeof e[name] === 'number' || typeof e[name] === 'string') && uniqueIn(name))
      return name;
    const values = new Set<unknown>();
    let ok = true;
    for (const e of entities) {
      const v = e[name];
      if (v === undefined || v === null || typeof v === 'object' || values.has(v)) {
        ok = false;
        break;
      }
      values.add(v);
    }
    if (ok) return name;
  }
  return undefined;
}

function configFor(config: CliConfig, name: string) {
  const entry = Object.entries(config.resources ?? {}).find(([n]) => n.toLowerCase() === name.toLowerCase());
  return entry?.[1];
}

/** Resources named in the config file must exist in a data file (a typo would be ignored otherwise). */
function checkConfigNames(config: CliConfig, resources: ServedResource[], source: string): void {
  const known = new Set(resources.map((r) => r.name.toLowerCase()));
  const missing = Object.keys(config.resources ?? {}).filter((n) => !known.has(n.toLowerCase()));
  if (missing.length > 0)
    throw new ConfigError(
      `the config file describes ${missing.map((m) => `'${m}'`).join(', ')}, which ${source} does not hold (it holds ${[...known].join(', ') || 'nothing'})`,
    );
}

/** The service of `serve` without a server: every array of the file a resource, admin data kept in it. */
export async function createFileService(
  options: SourceOptions & Partial<Pick<ServeOptions, 'watch'>> & { file: string; compaction?: FileStoreOptions['compaction'] },
  config: CliConfig = {},
): Promise<{ service: Service; store: FileStore; resources: ServedResource[] }> {
  const store = await FileStore.load(options.file, { compaction: options.compaction });
  const resources = [...store.resources.keys()].map((name) => ({ name, singular: store.singular.has(name) }));
  checkConfigNames(config, resources, options.file);
  const service = createService(serviceOptions(options, config, (name) => store.adminStorage(name)));
  const infer = (name: string) => inferKey(store.resources.get(name)!.all(), (property) => store.uniqueIn(name, property));
  const sample = (name: string) => store.resources.get(name)!.all().slice(0, SAMPLED);
  const keys = addResources(service, resources, (name) => store.storage(name), config, options.readOnly ?? false, infer, sample);
  // At start rather than at the first POST: the key check reads the index (a second or two at 1M entities).
  for (const [name, key] of keys) {
    const property = typeof key === 'string' ? key : key?.length === 1 ? key[0] : undefined;
    if (property !== undefined && !options.readOnly) store.prepareIndex(name, property);
  }
  if (options.watch) {
    store.watch((name) => {
      // A key the edit added becomes a resource now (restarting is not needed).
      resources.push({ name, singular: store.singular.has(name) });
      addResources(service, [resources[resources.length - 1]], (n) => store.storage(n), config, options.readOnly ?? false, infer);
    });
  }
  return { service, store, resources };
}

/** The same service over a database: the resources of its catalog plus those the config declares. */
async function createDatabaseService(
  options: SourceOptions & Pick<ServeOptions, 'file' | 'poolSize' | 'connectTimeoutMs'>,
  config: CliConfig,
) {
  // Loaded only for a database, so serving a file does not load the SQL storage.
  const { addToCatalog, catalog, openDatabase } = await import('./database.js');
  const db: Database = await openDatabase(options.file, {
    poolSize: options.poolSize ?? config.database?.poolSize,
    acquireTimeoutMs: config.database?.acquireTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? config.database?.connectTimeoutMs,
    onWait: (message) => process.stderr.write(`resourcery: ${message}\n`),
  });
  try {
    for (const name of Object.keys(config.resources ?? {})) await addToCatalog(db, name);
    const resources = await catalog(db);
    const service = createService(serviceOptions(options, config, (name) => db.storage(name)));
    // The key inferred from the file at import, as serving the file would infer it.
    const keys = new Map(resources.map((r) => [r.name, r.key]));
    addResources(
      service,
      resources,
      (name) => db.storage(name),
      config,
      options.readOnly ?? false,
      (name) => keys.get(name),
    );
    return { service, db, resources };
  } catch (e) {
    await db.close().catch(() => undefined);
    throw e;
  }
}

/** `http://host:port` of a listening server. */
export function urlOf(server: { address(): AddressInfo | string | null }, host: string): string {
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/** Loads the data source, builds the service and listens. */
export async function serve(options: ServeOptions, config: CliConfig = {}): Promise<Served> {
  let service: Service;
  let resources: ServedResource[];
  let store: FileStore | undefined;
  let release: () => Promise<void>;
  if (isDatabase(options.file)) {
    const opened = await createDatabaseService(options, config);
    ({ service, resources } = opened);
    release = () => opened.db.close();
  } else {
    ({ service, resources, store } = await createFileService(options, config));
    release = () => store!.close();
  }
  if (options.staticDir !== undefined && !(await stat(options.staticDir).catch(() => undefined))?.isDirectory()) {
    await service.close();
    await release();
    throw new Error(`--static ${options.staticDir}: no such directory`);
  }
  const listener = createNodeListener(service);
  const files = options.staticDir === undefined ? undefined : staticFiles(options.staticDir);
  const handler: http.RequestListener =
    files === undefined
      ? listener
      : (req, res) => {
          files(req, res).then(
            (served) => {
              if (!served) listener(req, res);
            },
            (e: unknown) => res.destroy(e instanceof Error ? e : new Error(String(e))),
          );
        };
  const log = options.accessLog === undefined ? undefined : accessLogger(options.accessLog, (line) => process.stdout.write(line));
  // Readiness, liveness and metrics are answered before the access log: a load balancer's or Prometheus's polling is not logged.
  const logged: http.RequestListener =
    log === undefined
      ? handler
      : (req, res) => {
          log(req, res);
          handler(req, res);
        };
  let probe: ReturnType<typeof probes>;
  try {
    probe = probes(service, { ...options, metricsPath: options.metricsPath ?? config.metricsPath });
  } catch (e) {
    await service.close();
    await release();
    throw e;
  }
  const server = createHttpServer(probe === undefined ? logged : (req, res) => void (probe(req, res) || logged(req, res)));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (e) {
    await service.close();
    await release();
    throw listenError(e as NodeJS.ErrnoException, options);
  }
  const close = async () => {
    server.close();
    server.closeAllConnections();
    await service.close();
    await release();
  };
  return { service, server, url: urlOf(server, options.host), resources, close, store };
}

function listenError(e: NodeJS.ErrnoException, options: ServeOptions): Error {
  const where = `${options.host}:${options.port}`;
  if (e.code === 'EADDRINUSE')
    return new Error(
      `port ${options.port} is already in use on ${options.host}: stop the other server, or pick another port with --port <n> (--port 0 picks a free one)`,
    );
  if (e.code === 'EACCES')
    return new Error(`not allowed to listen on ${where}: ports below 1024 need privileges; pick another with --port <n>`);
  if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND')
    return new Error(`cannot listen on ${options.host}: no such address on this machine (try --host 127.0.0.1 or --host 0.0.0.0)`);
  return e;
}

/** What `serve` prints once listening: the URL first (the conformance kit reads it), then each resource. */
export function banner(served: Pick<Served, 'url' | 'resources'>, options: ServeOptions, config: CliConfig, version: string): string {
  const lines = [`Resourcery ${version} is serving ${redact(options.file)} at ${served.url}`];
  if (options.quiet) return `${lines[0]}\n`;
  lines.push('', 'Resources:');
  const width = served.resources.reduce((w, r) => Math.max(w, r.name.length), 0);
  for (const r of served.resources)
    lines.push(`  ${served.url}/${r.name}${r.singular ? `${' '.repeat(width - r.name.length)}  (one entity)` : ''}`);
  if (served.resources.length === 0) lines.push('  (none)');
  lines.push(
    '',
    `Home:    ${served.url}/  (the explorer in a browser${options.staticDir !== undefined ? ', or index.html of --static' : ''})`,
  );
  if (options.staticDir !== undefined) lines.push(`Static:  files of ${options.staticDir}`);
  const notes = [];
  if (options.readOnly) notes.push('read-only');
  if (options.apiKeys.length > 0) notes.push('API key required');
  const origins = corsOrigins(options, config);
  notes.push(
    origins === false
      ? 'CORS off'
      : `CORS for ${origins.map((o) => (o === 'local' ? 'localhost pages' : o === '*' ? 'any origin' : o)).join(', ')}`,
  );
  lines.push(`Mode:    ${notes.join('; ')}`, '', 'Press Ctrl+C to stop.');
  return `${lines.join('\n')}\n`;
}

/**
 * Stops on SIGINT/SIGTERM: close the server, the service (webhook worker), then wait for
 * pending saves. Takes what `serve` returned, or (as before) a server, service and store.
 */
export function stopOnSignals(served: Pick<Served, 'close'> | http.Server, service?: Service, store?: FileStore): void {
  const close =
    'close' in served && service === undefined
      ? (served as Pick<Served, 'close'>).close
      : async () => {
          const server = served as http.Server;
          server.close();
          server.closeAllConnections();
          await service?.close();
          await store?.close();
        };
  const stop = () => void close().finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * The store halted (a journaled change could not be applied in memory): the requests in
 * flight are answered first (500, saying why), then the process ends with code 70; the next
 * start replays the journal (docs/cli-durability.md).
 */
export function stopOnHalt(served: Pick<Served, 'server' | 'store'>): void {
  served.store?.halting(() => {
    process.exitCode = 70;
    served.server.close(() => process.exit(70));
    setTimeout(() => process.exit(70), 2000).unref();
  });
}
