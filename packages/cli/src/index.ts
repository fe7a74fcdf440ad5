export { FileStore, type FileStoreOptions } from './file-store.js';
export type { CompactionPolicy } from './compaction.js';
export {
  serve,
  parseServeArgs,
  createFileService,
  stopOnSignals,
  urlOf,
  banner,
  corsOrigins,
  USAGE,
  type ServeOptions,
  type Served,
  type ServedResource,
} from './serve.js';
export { parseCommand, UsageError, type Command, type ImportOptions } from './args.js';
export { loadConfig, validateConfig, ConfigError, type CliConfig, type ResourceConfig } from './config.js';
export { openDatabase, importFile, catalog, type Database } from './database.js';
