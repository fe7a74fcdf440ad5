export { FileStore } from './file-store.js';
export { serve, parseServeArgs, createFileService, stopOnSignals, urlOf, USAGE, type ServeOptions } from './serve.js';
