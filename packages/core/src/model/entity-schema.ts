import type { Ajv, ValidateFunction } from 'ajv';
import { ServiceError } from '../errors.js';
import type { Entity } from '../query/conditions.js';
import type { JsonSchema } from '../query/schema-types.js';

/**
 * The schema of a resource's entities (docs/resources.md): a JSON Schema, validated with ajv, or
 * any Standard Schema v1 validator (zod, valibot, arktype...), whose output type becomes
 * the entity type. The interface is copied from the Standard Schema spec, so no package
 * is needed at run time.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    /** Standard JSON Schema (zod 4, valibot with its converter): types condition values and the OpenAPI document. */
    readonly jsonSchema?: { readonly input: (options: { readonly target: string }) => Record<string, unknown> };
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
      }>;
    };

/** A JSON Schema that carries its entity type (made by `jsonSchema()`); the property exists in the type only. */
export type TypedJsonSchema<T> = JsonSchema & { readonly '~entity'?: T };

/** What `schema` takes: a JSON Schema (typed by `jsonSchema()`, else plain) or a Standard Schema validator. */
export type EntitySchema<T> = TypedJsonSchema<T> | StandardSchemaV1<unknown, T>;

/**
 * A JSON Schema whose entity type is inferred from the literal: `type`, `properties`,
 * `required`, `additionalProperties: false`, `items`, `enum`, `const`, `anyOf`, `oneOf`.
 * Other keywords validate at run time but do not narrow the type.
 */
export function jsonSchema<const S extends object>(schema: S): TypedJsonSchema<EntityOf<S>> {
  return schema as JsonSchema;
}

interface Primitives {
  string: string;
  number: number;
  integer: number;
  boolean: boolean;
  null: null;
}

/** The TypeScript type of values a JSON Schema literal accepts. */
export type EntityOf<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { anyOf: readonly (infer A)[] }
      ? Each<A>
      : S extends { oneOf: readonly (infer A)[] }
        ? Each<A>
        : S extends { type: infer T }
          ? OfType<T extends readonly (infer U)[] ? U : T, S>
          : S extends { properties: object }
            ? ObjectOf<S>
            : unknown;

type Each<A> = A extends unknown ? EntityOf<A> : never;

type OfType<T, S> = T extends 'object'
  ? ObjectOf<S>
  : T extends 'array'
    ? S extends { items: infer I }
      ? EntityOf<I>[]
      : unknown[]
    : T extends keyof Primitives
      ? Primitives[T]
      : unknown;

type RequiredKeys<S> = S extends { required: readonly (infer R)[] } ? R : never;

type ObjectOf<S> = S extends { properties: infer P }
  ? Flat<
      { -readonly [K in keyof P & RequiredKeys<S>]: EntityOf<P[K]> } & {
        -readonly [K in Exclude<keyof P, RequiredKeys<S>>]?: EntityOf<P[K]>;
      } & (S extends {
          additionalProperties: false;
        }
          ? unknown
          : { [key: string]: unknown })
    >
  : Record<string, unknown>;

type Flat<T> = { [K in keyof T]: T[K] };

function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === 'object' && schema !== null && '~standard' in schema;
}

/** The JSON Schema that types conditions (and the OpenAPI document): the schema itself, or a Standard schema's own conversion. */
export function jsonSchemaOf(schema: EntitySchema<unknown> | undefined): JsonSchema | undefined {
  if (schema === undefined || !isStandardSchema(schema)) return schema;
  try {
    const converted = schema['~standard'].jsonSchema?.input({ target: 'draft-2020-12' });
    return converted;
  } catch {
    // A validator that cannot describe itself still validates; conditions are then untyped.
    return undefined;
  }
}

/** Validates an entity: 400 InvalidResourceEntity with a message per property. Returns the entity to store. */
export type Validate = (entity: Entity) => Entity | Promise<Entity>;

export function validatorOf(name: string, schema: EntitySchema<unknown> | undefined, ajv: Ajv): Validate | undefined {
  if (schema === undefined) return undefined;
  if (isStandardSchema(schema)) {
    const validate = schema['~standard'].validate;
    return async (entity) => {
      const result = await validate(entity);
      if (result.issues === undefined) return result.value as Entity;
      const data: Record<string, string> = {};
      for (const issue of result.issues) {
        const key = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.') || '(entity)';
        data[key] ??= issue.message;
      }
      return refuse(name, data);
    };
  }
  const compiled: ValidateFunction = ajv.compile(schema);
  return (entity) => {
    if (compiled(entity)) return entity;
    const data: Record<string, string> = {};
    for (const err of compiled.errors ?? []) {
      const path = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
      const prop =
        (err.params as { missingProperty?: string; additionalProperty?: string }).missingProperty ??
        (err.params as { additionalProperty?: string }).additionalProperty;
      const key = [path, prop].filter(Boolean).join('.') || '(entity)';
      data[key] ??= err.message ?? 'is invalid';
    }
    return refuse(name, data);
  };
}

function refuse(name: string, data: Record<string, string>): never {
  const summary = Object.entries(data)
    .map(([k, v]) => `${k}: ${v}`)
    .join('; ');
  throw new ServiceError('InvalidResourceEntity', `Invalid ${name} entity: ${summary}`, { data });
}
