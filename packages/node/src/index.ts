/**
 * `@resourcery/node`: the node:http bridge (docs/adapters/node.md). `createServer` and
 * `createNodeListener` for an app; `toPlainRequest`, `writeResponse` and `stripBasePath`
 * for an integration of its own. The sibling adapters' helpers are in `./internal`.
 */
export {
  createNodeListener,
  createServer,
  stripBasePath,
  toPlainRequest,
  writeResponse,
  type NodeAdapterOptions,
  type NodeListener,
} from './bridge.js';
