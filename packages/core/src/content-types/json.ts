import { ServiceError } from '../errors.js';
import type { Entity } from '../query/conditions.js';
import type { Result } from '../operations/results.js';
import type { ContentType, WriteContext } from './content-type.js';
import { chunked, STREAM_CHUNK } from './chunked.js';
import { nextTurn } from '../util/turn.js';
import { NotUtf8, parseInSlices } from './json-slices.js';
import { entitiesText } from './entity-texts.js';

/**
 * JSON text is UTF-8 (RFC 8259): bytes that are not are refused, not read as U+FFFD and
 * stored so. One pass checks and decodes; a BOM is kept, as Buffer.toString keeps it.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** JSON: compact; the success envelope unless `raw=true`. */
export const json: ContentType = {
  name: 'JSON',
  mimeType: 'application/json',
  bindings: ['application/json', 'application/service-json', 'json', 'text/plain'],
  read(body) {
    if (body.length > LARGE_BODY) return readLarge(body);
    let text: string;
    try {
      text = UTF8.decode(body);
    } catch {
      throw new ServiceError('FailedJsonDeserialization', NOT_UTF8);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new ServiceError('FailedJsonDeserialization', `The body is not valid JSON: ${(e as Error).message}`);
    }
    return toEntities(value);
  },
  write: (result, context) =>
    result.kind === 'stream'
      ? writeStream(result.entities, result.total, context.params.raw === 'true', context)
      : writeJson(result, context),
  streams: true,
};

/** Bodies of more bytes are decoded and parsed in slices, a turn between them (json-slices.ts). */
const LARGE_BODY = 256 * 1024;

/** json.read of a large body: the same entities and the same errors, other requests getting turns while it is read. */
async function readLarge(body: Uint8Array): Promise<Entity[]> {
  let value: unknown;
  try {
    value = await parseInSlices(body);
  } catch (e) {
    throw new ServiceError(
      'FailedJsonDeserialization',
      e instanceof NotUtf8 ? NOT_UTF8 : `The body is not valid JSON: ${(e as Error).message}`,
    );
  }
  return toEntities(value);
}

const NOT_UTF8 = 'The body is not valid JSON: it is not UTF-8 text';

/**
 * A result as JSON text: the envelope, or the bare value with `raw=true`. Text of more than
 * WHOLE_TEXT characters goes out in chunks, with a turn of the event loop between them
 * (docs/limits.md#large-work): the first part is made at once, the rest as it is read.
 */
export function writeJson(result: Result, context: WriteContext): string | AsyncIterable<string> {
  return context.params.raw === 'true' ? writeRaw(result) : writeEnvelope(result, context);
}

/** Entities in a body up to this many are written with one JSON.stringify (the common, small case). */
const WHOLE_ENTITIES = 256;
/** Text of a body made in the request's own turn; past it the rest is made in chunks, a turn between each. */
const WHOLE_TEXT = 64 * 1024;

/**
 * `head`, the entities as a JSON array, then `tail`: one string when it is small, else
 * the text made so far and the rest in chunks (chunked.ts), each after a turn.
 */
function arrayBody(head: string, entities: readonly Entity[], tail: () => string): string | AsyncIterable<string> {
  if (entities.length <= WHOLE_ENTITIES) return `${head}${stringifyArray(entities)}${tail()}`;
  let text = `${head}[`;
  let i = 0;
  while (i < entities.length && text.length < WHOLE_TEXT)
    text += i++ === 0 ? JSON.stringify(entities[i - 1]) : `,${JSON.stringify(entities[i - 1])}`;
  if (i === entities.length) return `${text}]${tail()}`;
  return restOf(text, entities, i, tail);
}

/**
 * The text made at once, then the rest of the entities in chunks of about STREAM_CHUNK
 * characters (as many entities as the first part's average size puts in one), a turn
 * before each: one JSON.stringify per chunk, as fast as one of the whole array.
 */
async function* restOf(first: string, entities: readonly Entity[], from: number, tail: () => string): AsyncGenerator<string> {
  yield first;
  const per = Math.max(1, Math.floor((from * STREAM_CHUNK) / first.length));
  for (let i = from; i < entities.length; i += per) {
    await nextTurn();
    const part = `,${JSON.stringify(entities.slice(i, i + per)).slice(1, -1)}`;
    yield i + per >= entities.length ? `${part}]${tail()}` : part;
  }
}

/** A streamed GET: the same text as for an array, written as the entities come. */
function writeStream(
  entities: AsyncIterable<Entity>,
  total: number | undefined,
  raw: boolean,
  context: WriteContext,
): AsyncIterable<string> {
  const item = (e: Entity, i: number) => (i === 0 ? JSON.stringify(e) : `,${JSON.stringify(e)}`);
  return raw
    ? chunked(entities, '[', item, () => ']')
    : chunked(
        entities,
        '{"Status":"success","Data":[',
        item,
        (n) => `],"DataCount":${n}${totalCount(total)},"TimeElapsedMs":${context.elapsedMs()}}`,
      );
}

/** `,"TotalCount":n` after DataCount with count=true (docs/uri.md#count). */
function totalCount(total: number | undefined): string {
  return total === undefined ? '' : `,"TotalCount":${total}`;
}

/** One object or an array of objects; anything else is not an entity. */
function toEntities(value: unknown): Entity[] {
  const items = Array.isArray(value) ? value : [value];
  items.forEach((item, i) => {
    if (!isEntity(item)) {
      throw new ServiceError(
        'InvalidResourceEntity',
        Array.isArray(value) ? `Item ${i} of the body is not an object` : 'The body is not an object or an array of objects',
      );
    }
  });
  return items as Entity[];
}

/** A JSON object (not null, not an array). */
function isEntity(value: unknown): value is Entity {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** What a body may be: one entity or an array of entities. */
export function isEntityBody(value: unknown): value is Entity | Entity[] {
  return Array.isArray(value) ? value.every(isEntity) : isEntity(value);
}

/** Whether a JSON value is an object of string values (headers). */
export function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

function writeRaw(result: Result): string | AsyncIterable<string> {
  switch (result.kind) {
    case 'entities':
      return result.state === undefined ? arrayBody('', result.entities, nothing) : entitiesText(result.entities, result.state);
    case 'count':
      return String(result.count);
    case 'change':
      return arrayBody('', result.data, nothing);
    default:
      return '';
  }
}

const nothing = () => '';

function writeEnvelope(result: Result, context: WriteContext): string | AsyncIterable<string> {
  switch (result.kind) {
    case 'entities': {
      const { entities, total } = result;
      // The common small answer in one template, without a closure for its tail (one allocation fewer a GET).
      if (entities.length <= WHOLE_ENTITIES)
        return `{"Status":"success","Data":${entitiesText(entities, result.state)},"DataCount":${entities.length}${totalCount(total)},"TimeElapsedMs":${context.elapsedMs()}}`;
      return arrayBody(
        '{"Status":"success","Data":',
        entities,
        () => `,"DataCount":${entities.length}${totalCount(total)},"TimeElapsedMs":${context.elapsedMs()}}`,
      );
    }
    case 'count':
      return `{"Status":"success","Count":${result.count},"TimeElapsedMs":${context.elapsedMs()}}`;
    case 'change': {
      let counts = '';
      if (result.inserted !== undefined) counts += `,"InsertedCount":${result.inserted}`;
      if (result.updated !== undefined) counts += `,"UpdatedCount":${result.updated}`;
      if (result.deleted !== undefined) counts += `,"DeletedCount":${result.deleted}`;
      const data = result.data;
      return arrayBody(
        '{"Status":"success","Data":',
        data,
        () => `,"DataCount":${data.length}${counts},"TimeElapsedMs":${context.elapsedMs()}}`,
      );
    }
    default:
      return '';
  }
}

function stringifyArray(entities: readonly Entity[]): string {
  return JSON.stringify(entities);
}
