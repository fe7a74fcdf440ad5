export { createService, Service, type ServiceOptions } from './service.js';
export type { ErrorInfo } from './pipeline.js';
export type { Caller, CallerRequest, Authenticate, HandleOptions } from './caller.js';
export type { ResourceRules } from './rules.js';
export type { ResourceHooks } from './hooks.js';
export { ServiceError, toServiceError, statusOf, ERROR_CODES, type ErrorCode } from './errors.js';
export type { PlainRequest, PlainResponse, Method, BodyChunk, HeaderValue } from './http/types.js';
export { METHODS } from './http/types.js';
export { stripBasePath, normalizeBasePath } from './http/base-path.js';
export { Cors, LOCAL_ORIGINS, type CorsOptions } from './http/cors.js';
export type { ResourceDefinition, ViewDefinition, WriteChange, ResourceKind } from './resources.js';
export {
  jsonSchema,
  type EntitySchema,
  type EntityOf,
  type StandardSchemaV1,
  type StandardResult,
  type TypedJsonSchema,
} from './entity-schema.js';
export type { Resource } from './resources.js';
export { apiKeys, ApiKeyPrincipal, type ApiKeyConfig, type ApiKeyRule } from './auth.js';
export type { EventDefinition, BinaryPayload, RaisedEvent, EventListener } from './events.js';
export type { ContentType, ProtocolProvider, ReadContext, WriteContext } from './content-types/content-type.js';
export { json, toEntities } from './content-types/json.js';
export type { Result, ErrorBody } from './results.js';
export {
  parseUri,
  clearParseCache,
  META_KEYS,
  type ParsedUri,
  type Condition,
  type Operator,
  type MetaEntry,
  type MetaKey,
} from './grammar/parse.js';
export { Locator } from './query/locator.js';
export { parseLiteral, type Literal } from './query/literal.js';
export { compileConditions, type Entity, type Predicate } from './query/conditions.js';
export { toMetaConditions, type MetaConditions } from './query/meta-conditions.js';
export { compileQuery, evaluate, type CompiledQuery } from './query/evaluate.js';
export { codeGenerationActive, generatedScans, setCodeGeneration } from './query/compiled-scan.js';
export { compareValues } from './query/order.js';
export type { JsonSchema } from './query/schema-types.js';
export { MemoryStorage } from './storage/memory.js';
export { ComputedStorage } from './storage/computed.js';
export {
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
} from './storage/storage.js';
export type { IndexDefinition } from './indexes.js';
export { checkVersions, entityVersion } from './storage/version.js';
export type { EventPayload, RaiseOptions } from './events.js';
export { Webhooks } from './webhooks/webhooks.js';
export { DEFAULT_RETRY_SCHEDULE, retryDelay, sign as signWebhook, type WebhookOptions } from './webhooks/delivery.js';
export { WEBHOOK_RESOURCE, type Webhook, type CustomPayloadRequest } from './webhooks/webhook.js';
export { LOG_RESOURCE as WEBHOOK_LOG_RESOURCE, type DeliveryAttempt } from './webhooks/log.js';
export type { OutboxMessage } from './webhooks/outbox.js';
export { parseHeaderRequest, type HeaderRequest } from './source-destination.js';
export { excel } from './content-types/excel.js';
export { jsonLines } from './content-types/json-lines.js';
export { propertyNames, resultEntities, resultSummary } from './content-types/tables.js';
export { DEFAULT_PROTOCOL, Protocols, type Negotiated } from './protocols.js';
export { openApiDocument, OPENAPI_MEDIA_TYPES, type OpenApiOptions } from './openapi.js';
export { explorerPage } from './explorer.js';
