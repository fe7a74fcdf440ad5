import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { createService, type Service } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { FileStore } from './file-store.js';

export interface ServeOptions {
  file: string;
  port: number;
  host: string;
  apiKeys: string[];
  allowPrivateDestinations: boolean;
}

export const USAGE = `Usage: resourcery serve <data.json> [options]

Serves every top-level array of a JSON file as a resource, with the full URI query
language, macros, webhooks and error records. Changes are written back to the file.

Options:
  --port <n>                    port to listen on (default 8080; 0 picks a free one)
  --host <address>              address to listen on (default 127.0.0.1)
  --api-key <key>               require this API key (repeatable; each key may do everything)
  --allow-private-destinations  let webhooks, Source and Destination reach private addresses
  -h, --help                    show this help
`;

export function parseServeArgs(argv: string[]): ServeOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      'api-key': { type: 'string', multiple: true, default: [] },
      'allow-private-destinations': { type: 'boolean', default: false },
    },
  });
  const [command, file, ...rest] = positionals;
  if (command !== 'serve' || !file || rest.length) throw new Error(USAGE);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a number from 0 to 65535, not '${values.port}'`);
  return { file, port, host: values.host!, apiKeys: values['api-key']!, allowPrivateDestinations: values['allow-private-destinations']! };
}

/** The service of `serve` without a server: every array of the file a resource, admin data kept in it. */
export async function createFileService(options: Pick<ServeOptions, 'file' | 'apiKeys' | 'allowPrivateDestinations'>): Promise<{ service: Service; store: FileStore }> {
  const store = await FileStore.load(options.file);
  const service = createService({
    apiKeys: options.apiKeys.map((key) => ({ key })),
    allowPrivateDestinations: options.allowPrivateDestinations,
    adminStorage: (name) => store.adminStorage(name),
  });
  for (const name of store.resources.keys()) service.addResource({ name, storage: store.storage(name) });
  return { service, store };
}

/** `http://host:port` of a listening server. */
export function urlOf(server: { address(): AddressInfo | string | null }, host: string): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Loads the file, builds the service and listens. */
export async function serve(options: ServeOptions): Promise<{ service: Service; server: Server; url: string; store: FileStore }> {
  const { service, store } = await createFileService(options);
  const server = createServer(service);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return { service, server, url: urlOf(server, options.host), store };
}

/** Stops on SIGINT/SIGTERM: close the server, the service (webhook worker), then wait for a running save. */
export function stopOnSignals(server: Server, service: Service, store: FileStore): void {
  const stop = () => {
    server.close();
    server.closeAllConnections();
    void service.close().then(() => store.idle()).finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
