/**
 * The OpenAPI 3.1 description of a service, generated from its resources, events,
 * content types and error codes. Conditions and meta-conditions are path segments, not
 * query parameters, so they are described as two path parameters with the grammar in
 * their descriptions (and in `info.description`).
 */
import { ERROR_CODES } from '../errors.js';
import { META_KEYS } from '../grammar/parse.js';
import type { Method } from '../http/types.js';
import type { Resource, ResourceRegistry } from '../model/resources.js';
import type { Events } from '../webhooks/events.js';
import type { Protocols } from '../content-types/protocols.js';
import { binaryPaths } from './openapi-binary.js';
import { embeddable, embeddedSchema, metaConditionsWithEmbed } from './openapi-embed.js';
import type { Relation } from '../model/relations.js';

export interface OpenApiOptions {
  /** Mount path of the service (`/api`); the document's server URL. */
  basePath?: string;
  title?: string;
  version?: string;
}

type Json = Record<string, unknown>;

/** The media types that ask `GET /` for this document. */
export const OPENAPI_MEDIA_TYPES = [
  'application/vnd.oai.openapi+json',
  'application/openapi+json',
  'application/vnd.oai.openapi',
  'application/openapi+yaml',
  'application/yaml',
];

const URI_LANGUAGE = `Every URI has the form \`/<resource>[-<view>]/<conditions>/<meta-conditions>\`; each part is optional, and \`_\` (or an empty part) means "none".

- **Conditions** filter entities: items joined by \`&\`, each \`<property><operator><value>\` with the operators \`=\` \`!=\` \`<\` \`>\` \`<=\` \`>=\`. Example: \`/Person/Age>30&Email!=null\`. \`|\` lists alternatives inside one item, any of which may hold: \`Status=open|Status=pending\`, or with the locator and operator left out after the first, \`Status=open|pending\` and \`Id=1|2|3\` (an IN list). Dotted locators reach nested properties (\`Address.City=Oslo\`) and \`.Length\` of strings and arrays.
- **Values**: \`null\`; \`true\`/\`false\`; numbers; ISO 8601 dates; \`'x'\` or \`"x"\` forces a string; an empty value is the empty string. With a declared schema, values take the property's type.
- **Encoding**: the URI is split on \`/\`, then on \`&\`, then on \`|\`, then each item at its operator, and only then are names and values percent-decoded. So write operators as they are, and percent-encode \`&\`, \`/\`, \`|\`, \`=\`, \`<\`, \`>\`, \`!\` and \`%\` inside values (\`Name=R%26D\`). \`+\` stays \`+\`.
- **Meta-conditions** shape the result, as \`<name>=<value>\` items joined by \`&\`: ${META_KEYS.map((k) => `\`${k}\``).join(', ')}. Example: \`/Person/_/order_desc=Age&limit=10&select=Name,Age\`. Order of evaluation: conditions, search, embed, add, rename, select, distinct, order, offset, limit. When a name is given twice the last wins.
- **Relations**: a resource's declared relations put related entities into each entity with \`embed=Customer,Orders\`, read after it with dotted locators (\`select=Id,Customer.Name\`); a condition through a relation compares the related entity (\`Customer.City=Oslo\`; to-many: any of them).
- **Keys**: in a resource that declares a key, a bare value addresses it: \`/Person/7\` means \`/Person/Id=7\`; a composite key takes its values in order, comma-separated (\`/Order/B,3\`). Such resources have a \`/<resource>/{key}\` path below.
- **Views** are named selections declared by a resource: \`/Person-Adults\`.
- **Macros**: \`/$name/...\` runs a stored request with its own conditions and meta-conditions (\`Service.Admin.Macro\`).
- **REPORT** on any entity resource URI answers the count of what GET would return (\`{"Status":"success","Count":n}\`).
- Names of resources, properties and meta-conditions are case-insensitive; a resource can be named by any unique dot-suffix (\`Admin.Error\`).
- A query string (\`?a=b\`) is refused with 400 \`InvalidUriSyntax\`.`;

const META_DESCRIPTIONS: Record<string, string> = {
  unsafe: '`true` lets PATCH and DELETE change more than one entity',
  limit: 'at most this many entities (`-1`: no limit)',
  offset: 'skip this many entities (negative: keep the last N)',
  order_asc:
    'sort ascending by these properties, comma-separated, each breaking the ties of the ones before; with order_desc, the one written first is the primary order',
  order_desc: 'sort descending by these properties, comma-separated (as order_asc)',
  select: 'comma-separated properties to keep, in that order',
  add: 'comma-separated derived values to add (`Name.Length`)',
  rename: 'comma-separated `<property>-><new name>` pairs',
  distinct: '`true` drops repeated output entities',
  search: "case-insensitive text to find in the entity's JSON (`search=ann`)",
  search_regex: "a URI-encoded JavaScript regular expression matched against the entity's JSON",
  safepost: 'POST updates entities that match on these comma-separated properties instead of inserting',
  count: '`true` adds `TotalCount` (the entities matched before offset and limit) after `DataCount`, and the header `X-Total-Count`',
  embed:
    "comma-separated relation names: each entity gets its related entities under the relation's name (to-one: an object or null; to-many: an array)",
};

/** What the document describes: a service's resources, events and content types. */
export interface Described {
  readonly resources: ResourceRegistry;
  readonly events: Events;
  readonly protocols: Protocols;
  /** Whether requests must authenticate. */
  readonly authenticates: boolean;
}

/** `Person.Admin` -> `Person.Admin`; letters outside [A-Za-z0-9._-] become `_` (component names allow no others). */
function componentName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

function ref(name: string): Json {
  return { $ref: `#/components/schemas/${name}` };
}

/** The document; `shown` narrows it to the resources (and their methods) one caller may use (admin/listing.ts). */
export function openApiDocument(service: Described, options: OpenApiOptions = {}, shown?: readonly Resource[]): Json {
  const resources = shown ?? service.resources.all();
  const entityResources = resources.filter((r) => r.kind === 'EntityResource');
  const schemas: Json = {
    ErrorBody: errorBodySchema(),
    CountResult: {
      type: 'object',
      properties: { Status: { const: 'success' }, Count: { type: 'integer' }, TimeElapsedMs: { type: 'number' } },
      required: ['Status', 'Count'],
    },
  };
  const paths: Json = { '/': rootPath() };
  for (const r of entityResources) {
    const name = componentName(r.name);
    schemas[name] = { ...entitySchema(r), 'x-resource': r.name };
    // What a GET answers with `embed` (docs/openapi.md#relations): only relations to resources this reader may GET.
    const relations = embeddable(r, resources);
    if (relations.length > 0) schemas[`${name}.Embedded`] = embeddedSchema(entitySchema(r), relations, (t) => ref(componentName(t.name)));
    schemas[`${name}.Result`] = resultSchema(relations.length > 0 ? `${name}.Embedded` : name);
    Object.assign(paths, resourcePaths(service, r, name, relations));
  }
  const binaryResources = resources.filter((r) => r.kind === 'BinaryResource');
  for (const r of binaryResources) Object.assign(paths, binaryPaths(r));
  const webhooks: Json = {};
  for (const r of resources.filter((x) => x.kind === 'EventResource')) webhooks[r.name] = eventItem(service, r);
  const secured = service.authenticates;
  const document: Json = {
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'Resourcery service',
      version: options.version ?? '1.0.0',
      description: `${URI_LANGUAGE}\n\nErrors answer the \`ErrorBody\` JSON and an \`ErrorInfo\` header linking to the stored Error record (\`Service.Admin.Error\`).`,
    },
    servers: [{ url: options.basePath || '/' }],
    tags: [...entityResources, ...binaryResources].map((r) => ({ name: r.name, description: r.description || undefined })),
    paths,
    webhooks,
    components: {
      schemas,
      parameters: parameters(),
      headers: {
        ErrorInfo: { description: 'URI of the Error record that describes this failure', schema: { type: 'string' } },
        ETag: {
          description:
            'The stored version of the one entity the response holds (none when it holds several or none), a strong entity tag: send it back in If-Match (writes) or If-None-Match (reads)',
          schema: { type: 'string' },
        },
      },
      responses: {
        Error: {
          description: 'The request failed; the body names the error code',
          headers: { ErrorInfo: { $ref: '#/components/headers/ErrorInfo' } },
          content: { 'application/json': { schema: ref('ErrorBody') } },
        },
        NoContent: { description: 'Nothing matched' },
        NotModified: {
          description: 'If-None-Match named the current version of the one entity the request answers: no body',
          headers: { ETag: { $ref: '#/components/headers/ETag' } },
        },
        PreconditionFailed: {
          description:
            'If-Match named a version the entity no longer has (or no entity matches): nothing was written (`PreconditionFailed`)',
          headers: { ErrorInfo: { $ref: '#/components/headers/ErrorInfo' } },
          content: { 'application/json': { schema: ref('ErrorBody') } },
        },
      },
      ...(secured
        ? {
            securitySchemes: {
              apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'An API key: `Authorization: apikey KEY`' },
              basic: { type: 'http', scheme: 'basic', description: 'A blank user name and the API key as password' },
            },
          }
        : {}),
    },
    'x-resources': resources.map((r) => ({
      name: r.name,
      kind: r.kind,
      description: r.description,
      methods: [...r.methods],
      views: r.views.map((v) => ({ name: v.name, description: v.description })),
      key: r.key ?? undefined,
      embed: r.kind === 'EntityResource' && r.relations.size > 0 ? embeddable(r, resources).map((x) => x.name) : undefined,
      schema: r.kind === 'EntityResource' ? `#/components/schemas/${componentName(r.name)}` : undefined,
      contentType: r.binary?.contentType,
    })),
  };
  if (secured) document.security = [{ apiKey: [] }, { basic: [] }];
  return document;
}

function entitySchema(r: Resource): Json {
  const schema = r.schema;
  if (schema && typeof schema === 'object') {
    const { $schema: _ignored, $id: _id, ...rest } = schema;
    return { ...rest, description: rest.description ?? (r.description || undefined) };
  }
  return { type: 'object', description: r.description || undefined, additionalProperties: true };
}

function resultSchema(entity: string): Json {
  return {
    type: 'object',
    properties: {
      Status: { const: 'success' },
      Data: { type: 'array', items: ref(entity) },
      DataCount: { type: 'integer' },
      TotalCount: { type: 'integer', description: 'with `count=true`: the entities matched before offset and limit' },
      InsertedCount: { type: 'integer' },
      UpdatedCount: { type: 'integer' },
      DeletedCount: { type: 'integer' },
      TimeElapsedMs: { type: 'number' },
    },
    required: ['Status'],
  };
}

function errorBodySchema(): Json {
  return {
    type: 'object',
    description: 'The body of every error response',
    properties: {
      Status: { const: 'fail' },
      ErrorType: { type: 'string', description: '`Service.Results.<ErrorCode>`' },
      ErrorCode: { type: 'string', enum: [...ERROR_CODES] },
      Message: { type: 'string' },
      Data: { description: 'Details, such as per-property validation messages' },
      MoreInfoAt: { type: 'string', description: 'URI of the Error record' },
      TimeStamp: { type: 'string', format: 'date-time' },
      Uri: { type: 'string' },
      TimeElapsedMs: { type: 'number' },
    },
    required: ['Status', 'ErrorType', 'ErrorCode', 'Message', 'TimeStamp', 'Uri'],
  };
}

function parameters(): Json {
  return {
    conditions: {
      name: 'conditions',
      in: 'path',
      required: true,
      description:
        'Conditions joined by `&`, e.g. `Age>30&Name!=null`; `|` for alternatives within one, e.g. `Id=1|2|3`; `_` for none. Operators are written as they are; values are percent-encoded (see the API description).',
      schema: { type: 'string', default: '_' },
      example: 'Age>30',
    },
    metaConditions: {
      name: 'metaConditions',
      in: 'path',
      required: true,
      description: `Meta-conditions joined by \`&\`, e.g. \`order_desc=Age&limit=10\`; \`_\` for none.\n\n${META_KEYS.map((k) => `- \`${k}\`: ${META_DESCRIPTIONS[k] ?? ''}`).join('\n')}`,
      schema: { type: 'string', default: '_' },
      example: 'limit=10',
    },
    IfMatch: {
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        'Write only if every entity the request changes still has one of these versions (ETags, comma-separated), or `*`: any existing entity; otherwise 412 and nothing is written',
      schema: { type: 'string' },
      example: '"1.4"',
    },
    IfNoneMatch: {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description:
        'The ETags of copies the client holds. GET, HEAD: 304 without a body while the one entity answered still has one of them. PUT, PATCH, DELETE: 412 and nothing written while an entity the write changes has one of them; `*`: while it changes any (a PUT that may only insert)',
      schema: { type: 'string' },
      example: '"1.4"',
    },
  };
}

/** What a GET can be answered with: one content entry per writable content type. */
function responseContent(service: Described, entity: string): Json {
  const content: Json = {};
  for (const p of service.protocols.entities()) {
    for (const t of p.ContentTypes as Array<{ MimeType: string; CanWrite: boolean }>) {
      if (!t.CanWrite || content[t.MimeType] !== undefined) continue;
      content[t.MimeType] =
        t.MimeType === 'application/json'
          ? { schema: ref(`${entity}.Result`) }
          : { schema: { type: 'string', contentMediaType: t.MimeType } };
    }
  }
  return content;
}

function requestContent(service: Described, entity: string): Json {
  const body = { oneOf: [ref(entity), { type: 'array', items: ref(entity) }] };
  const content: Json = {};
  for (const p of service.protocols.entities()) {
    for (const t of p.ContentTypes as Array<{ MimeType: string; CanRead: boolean }>) {
      if (!t.CanRead || content[t.MimeType] !== undefined) continue;
      content[t.MimeType] =
        t.MimeType === 'application/json' ? { schema: body } : { schema: { type: 'string', contentMediaType: t.MimeType } };
    }
  }
  return content;
}

const SUMMARY: Record<string, string> = {
  GET: 'Get the entities that match',
  HEAD: 'Whether any entity matches (200) or none (204)',
  POST: 'Insert one entity or an array of entities',
  PUT: 'Insert, or replace the one entity that matches',
  PATCH: 'Update the entities that match (more than one needs unsafe=true)',
  DELETE: 'Delete the entities that match (more than one needs unsafe=true)',
};

function operation(service: Described, r: Resource, entity: string, method: Method, suffix: string): Json {
  const op: Json = {
    tags: [r.name],
    summary: SUMMARY[method],
    operationId: `${method.toLowerCase()}_${entity.replace(/[.-]/g, '_')}${suffix}`,
    responses: { default: { $ref: '#/components/responses/Error' } },
  };
  const responses = op.responses as Json;
  const etag = { ETag: { $ref: '#/components/headers/ETag' } };
  const ok = { description: 'Success', headers: etag, content: responseContent(service, entity) };
  const notModified = { $ref: '#/components/responses/NotModified' };
  const preconditionFailed = { $ref: '#/components/responses/PreconditionFailed' };
  if (method === 'GET')
    Object.assign(responses, { 200: ok, 204: { $ref: '#/components/responses/NoContent' }, 304: notModified, 412: preconditionFailed });
  else if (method === 'HEAD')
    Object.assign(responses, {
      200: { description: 'Some entity matches', headers: etag },
      204: { $ref: '#/components/responses/NoContent' },
      304: notModified,
      412: preconditionFailed,
    });
  else if (method === 'POST') Object.assign(responses, { 200: ok, 201: { description: 'Inserted', headers: etag, content: ok.content } });
  else if (method === 'PUT')
    Object.assign(responses, { 200: ok, 201: { description: 'Inserted', headers: etag, content: ok.content }, 412: preconditionFailed });
  else if (method === 'PATCH') Object.assign(responses, { 200: ok, 412: preconditionFailed });
  else Object.assign(responses, { 200: { description: 'Success', content: ok.content }, 412: preconditionFailed });
  if (method === 'GET' || method === 'HEAD')
    op.parameters = [{ $ref: '#/components/parameters/IfNoneMatch' }, { $ref: '#/components/parameters/IfMatch' }];
  else if (method !== 'POST')
    op.parameters = [{ $ref: '#/components/parameters/IfMatch' }, { $ref: '#/components/parameters/IfNoneMatch' }];
  if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
    op.requestBody = { required: true, content: requestContent(service, entity) };
  }
  return op;
}

function pathItem(service: Described, r: Resource, entity: string, suffix: string, params: boolean): Json {
  const item: Json = { summary: r.description || r.name };
  if (params) item.parameters = [{ $ref: '#/components/parameters/conditions' }, { $ref: '#/components/parameters/metaConditions' }];
  for (const method of r.methods) {
    if (method === 'REPORT') continue;
    item[method.toLowerCase()] = operation(service, r, entity, method, suffix);
  }
  if (r.methods.includes('REPORT'))
    item['x-report'] = {
      summary: 'REPORT answers the count of what GET returns',
      responses: { 200: { content: { 'application/json': { schema: ref('CountResult') } } } },
    };
  return item;
}

function resourcePaths(service: Described, r: Resource, entity: string, relations: readonly Relation<Resource>[]): Json {
  const paths: Json = {};
  paths[`/${r.name}`] = pathItem(service, r, entity, '', false);
  const query = pathItem(service, r, entity, '_query', true);
  paths[`/${r.name}/{conditions}/{metaConditions}`] = query;
  if (r.key) paths[keyPath(r)] = keyItem(service, r, entity);
  for (const v of r.views) {
    const item = pathItem(service, r, entity, `_${v.name.replace(/[^A-Za-z0-9_]/g, '_')}`, true);
    item.description = `View ${v.name}${v.description ? `: ${v.description}` : ''}`;
    paths[`/${r.name}-${v.name}/{conditions}/{metaConditions}`] = item;
  }
  // The relations `embed` takes on this resource, in its metaConditions parameter.
  if (relations.length > 0) {
    const meta = metaConditionsWithEmbed(parameters().metaConditions as Json, relations);
    for (const item of Object.values(paths) as Json[])
      if (Array.isArray(item.parameters))
        item.parameters = item.parameters.map((p: Json) => (p.$ref === '#/components/parameters/metaConditions' ? meta : p));
  }
  return paths;
}

/** `/Person/{Id}`; a composite key's values in order, comma-separated: `/Order/{Shop},{No}`. */
function keyPath(r: Resource): string {
  return `/${r.name}/${r.key!.map((k) => `{${k}}`).join(',')}`;
}

/** The path item of one entity addressed by its key (docs/keys.md): every method but POST. */
function keyItem(service: Described, r: Resource, entity: string): Json {
  const key = r.key!;
  const item: Json = {
    summary: `One ${r.name} by its key`,
    description: `A bare value addresses the key: \`${keyPath(r)}\` means \`/${r.name}/${key.map((k) => `${k}={${k}}`).join('&')}\`.${
      key.length > 1 ? ' Values are comma-separated; write a comma inside a value as `%2C`.' : ''
    } Meta-conditions may follow as a third part (\`${keyPath(r)}/select=...\`).`,
    parameters: key.map((name) => ({
      name,
      in: 'path',
      required: true,
      description: `The key property \`${name}\`, percent-encoded`,
      schema: keySchema(r, name),
    })),
  };
  for (const method of r.methods) {
    if (method === 'REPORT' || method === 'POST') continue;
    item[method.toLowerCase()] = operation(service, r, entity, method, '_key');
  }
  return item;
}

/** A key parameter typed as the schema types its property (without null: a key is never null). */
function keySchema(r: Resource, name: string): Json {
  const properties = (r.schema as { properties?: Record<string, Json> } | undefined)?.properties;
  const declared = properties && Object.entries(properties).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
  if (!declared || typeof declared !== 'object') return { type: ['string', 'number'] };
  const { type, ...rest } = declared;
  if (!Array.isArray(type)) return declared;
  const types = type.filter((t) => t !== 'null');
  return { ...rest, type: types.length === 1 ? types[0] : types };
}

function rootPath(): Json {
  return {
    get: {
      summary: 'The resources of this service',
      description:
        'Content negotiation: JSON (default) lists the resources (`Service.AvailableResource`); `application/vnd.oai.openapi+json` or `application/openapi+json` answers this document (`application/yaml`: the same JSON text, which is valid YAML 1.2); a browser (`text/html`) gets the explorer page.',
      operationId: 'get_root',
      responses: {
        200: {
          description: 'The listing, this document or the explorer page',
          content: {
            'application/json': { schema: { type: 'object' } },
            'application/vnd.oai.openapi+json': { schema: { type: 'object' } },
            'text/html': { schema: { type: 'string' } },
          },
        },
        default: { $ref: '#/components/responses/Error' },
      },
    },
  };
}

function eventItem(service: Described, r: Resource): Json {
  const definition = service.events.get(r.name);
  const content: Json = definition?.contentType
    ? { [definition.contentType]: { schema: { type: 'string', contentMediaType: definition.contentType } } }
    : { 'application/json': { schema: { type: 'array', items: definition?.schema ?? { type: 'object' } } } };
  return {
    post: {
      summary: r.description || `Event ${r.name}`,
      description: `Delivered to webhooks subscribed to \`/${r.name}\` (\`Service.Admin.Webhook\`); the method, headers and payload can be customised per webhook.`,
      operationId: `event_${r.name.replace(/[^A-Za-z0-9_]/g, '_')}`,
      requestBody: { content },
      responses: { '2XX': { description: 'Delivered; any other answer is retried' } },
    },
  };
}
