/**
 * `@resourcery/core`: what an app needs to serve its resources. Storage authors import
 * `@resourcery/core/storage` (the query model a storage receives and its helpers).
 */
export { createService, createMetrics, Service, type ServiceOptions } from './service.js';
export { METRICS_CONTENT_TYPE, DEFAULT_LATENCY_BUCKETS, type Metrics, type MetricsOptions } from './request/metrics.js';
export type { AdminOptions } from './admin/access.js';
export type { RedactionOptions } from './model/redaction.js';
export type { ErrorInfo } from './request/host.js';
export type { Caller, CallerRequest, Authenticate, HandleOptions, FetchOptions } from './model/caller.js';
export type { ResourceRules } from './model/rules.js';
export type { ResourceHooks } from './model/hooks.js';
export { ServiceError, toServiceError, statusOf, ERROR_CODES, type ErrorCode } from './errors.js';
export type { PlainRequest, PlainResponse, Method, BodyChunk, HeaderValue } from './http/types.js';
export { METHODS } from './http/types.js';
export type { RequestInfo, ResponseInfo, RequestObserver } from './http/observer.js';
export { stripBasePath, normalizeBasePath } from './http/base-path.js';
export type { CorsOptions } from './http/cors.js';
export type { ResourceDefinition, ViewDefinition, WriteChange, ResourceKind } from './model/resources.js';
export type { OnDelete, RelationDefinition } from './model/relations.js';
export {
  jsonSchema,
  type EntitySchema,
  type EntityOf,
  type StandardSchemaV1,
  type StandardResult,
  type TypedJsonSchema,
} from './model/entity-schema.js';
export type { Resource } from './model/resources.js';
export type {
  BinaryAnswer,
  BinaryBody,
  BinaryCondition,
  BinaryContent,
  BinaryRequest,
  BinaryResourceDefinition,
} from './model/binary-resources.js';
export { apiKeys, ApiKeyPrincipal, type ApiKeyConfig, type ApiKeyRule } from './model/api-keys.js';
export type { EventDefinition, BinaryPayload, RaisedEvent, EventListener } from './webhooks/events.js';
export type { ContentType, ProtocolProvider, ReadContext, WriteContext } from './content-types/content-type.js';
export { json } from './content-types/json.js';
export type { Result, ErrorBody } from './operations/results.js';
export type { Entity } from './query/conditions.js';
export type { JsonSchema } from './query/schema-types.js';
export { MemoryStorage } from './storage/memory.js';
export type { Storage } from './storage/storage.js';
export type { Readiness, StorageReadiness } from './storage/readiness.js';
export type { IndexDefinition } from './model/indexes.js';
export type { EventPayload, RaiseOptions } from './webhooks/events.js';
export type { StreamOptions } from './streams/streams.js';
export { MemoryStreamLog, type StreamLog, type LoggedEvent, type Backlog, type Retention } from './streams/log.js';
export { DEFAULT_RETRY_SCHEDULE, sign as signWebhook, type WebhookOptions } from './webhooks/delivery.js';
export { WEBHOOK_RESOURCE, type Webhook, type CustomPayloadRequest } from './webhooks/webhook.js';
export { LOG_RESOURCE as WEBHOOK_LOG_RESOURCE, type DeliveryAttempt } from './webhooks/log.js';
export { excel } from './content-types/excel.js';
export { jsonLines } from './content-types/json-lines.js';
export { propertyNames, resultEntities, resultSummary } from './content-types/tables.js';
export { OPENAPI_MEDIA_TYPES, type OpenApiOptions } from './admin/openapi.js';
