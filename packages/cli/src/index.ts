export { FileStore } from './file-store.js';
export { serve, parseServeArgs, type ServeOptions } from './serve.js';
