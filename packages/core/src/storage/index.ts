/**
 * `@resourcery/core/storage`: what a storage author needs (docs/storage.md), kept out of
 * the root export, which holds what an app needs. The query model a storage receives
 * (conditions, locators, literals), the helpers to apply what it does not push down, and
 * the parser and query compiler to test a storage with real URIs.
 */
export {
  keyIdentity,
  keyTaken,
  takenKeyConflict,
  keyValues,
  SELECT_ALL,
  targetOf,
  type IndexedProperty,
  type SelectQuery,
  type SelectResult,
  type Stamp,
  type Storage,
  type StorageIndex,
  type Target,
  type WriteBatch,
} from './storage.js';
export { MemoryStorage } from './memory.js';
export { EqualityIndex, type IndexedChange } from './equality-index.js';
export { ComputedStorage } from './computed.js';
export { checkVersions, entityVersion } from './version.js';
export { compileConditions, type Entity, type Predicate } from '../query/conditions.js';
export { Locator } from '../grammar/locator.js';
export { parseLiteral, type Literal } from '../grammar/literal.js';
export { compareValues } from '../query/order.js';
export { jsonStringEnd, skipJsonSpace } from '../util/json-bytes.js';
export {
  parseUri,
  META_KEYS,
  type ParsedUri,
  alternativesOf,
  inListLocator,
  type Condition,
  type ConditionItem,
  type AnyOf,
  type Operator,
  type MetaEntry,
  type MetaKey,
} from '../grammar/parse.js';
export { toMetaConditions, type MetaConditions } from '../query/meta-conditions.js';
export { compileQuery, evaluate, type CompiledQuery } from '../query/evaluate.js';
export type { JsonSchema } from '../query/schema-types.js';
