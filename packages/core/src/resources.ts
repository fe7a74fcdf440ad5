import { Ajv, type ValidateFunction } from 'ajv';
import type { Caller } from './caller.js';
import { ServiceError } from './errors.js';
import type { ResourceHooks } from './hooks.js';
import { parseUri, type Condition, type MetaEntry, type ParsedUri } from './grammar/parse.js';
import { METHODS, type Method } from './http/types.js';
import type { Entity } from './query/conditions.js';
import { compileQuery, type CompiledQuery } from './query/evaluate.js';
import { toMetaConditions } from './query/meta-conditions.js';
import { checkMetaLocators, typeConditions, type JsonSchema } from './query/schema-types.js';
import { RowRules, type ResourceRules, type RowRule } from './rules.js';
import { MemoryStorage } from './storage/memory.js';
import type { Storage } from './storage/storage.js';

export type ResourceKind = 'EntityResource' | 'EventResource';

/** A named selection of a resource: `/Person-Adults`. Its conditions and meta-conditions come first. */
export interface ViewDefinition {
  name: string;
  description?: string;
  /** Conditions in URI syntax, e.g. `Age>=18`. */
  conditions?: string;
  /** Meta-conditions in URI syntax, e.g. `order_asc=Name`. */
  meta?: string;
}

export interface WriteChange {
  operation: 'insert' | 'update';
  /** The stored entity an update replaces. */
  existing?: Entity;
  /** Checks that the caller may use `method` on `resource` (403 Forbidden otherwise). */
  authorize(resource: string, method: string): void;
  /** Who is writing. */
  caller: Caller;
}

export interface ResourceDefinition {
  name: string;
  description?: string;
  /** JSON Schema of one entity: validates bodies and types condition values. */
  schema?: JsonSchema;
  /** Defaults to a new MemoryStorage. */
  storage?: Storage;
  /** Defaults to every method. */
  methods?: Method[];
  views?: ViewDefinition[];
  /** Raise `<Name>.Inserted/Updated/Deleted` after changes (default: the service's `events` option). */
  events?: boolean;
  /** Turns each incoming entity into the one to store; throw a ServiceError to refuse it. */
  beforeWrite?: (entity: Entity, change: WriteChange) => Entity | Promise<Entity>;
  /** Shapes a stored entity for output (e.g. to hide a secret). */
  toOutput?: (entity: Entity) => Entity;
  /** Called after a successful write (e.g. to refresh a cache). */
  afterWrite?: () => void | Promise<void>;
  /** Who may use the resource and which rows they see (allow/deny, row-level rules). */
  rules?: ResourceRules;
  /** before/after hooks for reads, inserts, updates and deletes, with the caller. */
  hooks?: ResourceHooks;
}

interface View {
  name: string;
  description: string;
  conditions: readonly Condition[];
  meta: readonly MetaEntry[];
}

/** A resource as the service runs it. */
export class Resource {
  readonly name: string;
  readonly description: string;
  readonly kind: ResourceKind;
  readonly methods: readonly Method[];
  readonly storage: Storage;
  readonly schema?: JsonSchema;
  readonly raisesEvents: boolean;
  readonly views: readonly View[];
  readonly definition: ResourceDefinition;
  readonly hooks: ResourceHooks;
  private readonly rowRules: RowRules;
  private readonly validator?: ValidateFunction;
  private readonly compiled = new WeakMap<ParsedUri, CompiledQuery>();

  constructor(definition: ResourceDefinition, options: { kind?: ResourceKind; events: boolean; ajv: Ajv }) {
    if (!/^[\p{L}_][\p{L}\p{N}_.]*$/u.test(definition.name) || definition.name.endsWith('.')) {
      throw new Error(`Invalid resource name '${definition.name}': use letters, digits, '_' and '.'`);
    }
    this.definition = definition;
    this.name = definition.name;
    this.description = definition.description ?? '';
    this.kind = options.kind ?? 'EntityResource';
    this.methods = this.kind === 'EventResource' ? [] : (definition.methods ?? METHODS).map((m) => m.toUpperCase() as Method);
    this.storage = definition.storage ?? new MemoryStorage();
    this.schema = definition.schema;
    this.raisesEvents = definition.events ?? options.events;
    if (definition.schema) this.validator = options.ajv.compile(definition.schema);
    this.hooks = definition.hooks ?? {};
    this.rowRules = new RowRules(this.name, definition.rules?.rows, this.schema);
    this.views = (definition.views ?? []).map((v) => {
      const parsed = parseUri(`/_/${v.conditions || '_'}/${v.meta || '_'}`);
      if (parsed.error) throw new Error(`View '${v.name}' of '${this.name}': ${parsed.error.message}`);
      return { name: v.name, description: v.description ?? '', conditions: parsed.conditions, meta: parsed.meta };
    });
  }

  allows(method: string): boolean {
    return (this.methods as readonly string[]).includes(method);
  }

  /** Whether the resource's rules let the caller use the method at all. */
  permits(caller: Caller, method: Method): boolean {
    return this.definition.rules?.allow?.(caller, method) ?? true;
  }

  /** The caller's row rule for a method, or null for every row. */
  rows(caller: Caller, method: Method): RowRule | null {
    return this.rowRules.for(caller, method);
  }

  /**
   * The compiled query of a parsed URI against this resource (cached per parse); a row
   * rule's conditions come first, so storage gets them with the request's and pushes them down.
   */
  query(parsed: ParsedUri, rule: RowRule | null = null): CompiledQuery {
    if (rule !== null && rule.conditions.length > 0) {
      const q = this.query(parsed);
      return compileQuery([...rule.conditions, ...q.conditions], q.meta);
    }
    let q = this.compiled.get(parsed);
    if (q === undefined) {
      const view = this.view(parsed.view);
      const conditions = typeConditions(view ? [...view.conditions, ...parsed.conditions] : parsed.conditions, this.schema);
      const meta = toMetaConditions(view ? [...view.meta, ...parsed.meta] : parsed.meta);
      checkMetaLocators(meta, this.schema);
      q = compileQuery(conditions, meta);
      this.compiled.set(parsed, q);
    }
    return q;
  }

  private view(name: string | null): View | undefined {
    if (name === null) return undefined;
    const lower = name.toLowerCase();
    const view = this.views.find((v) => v.name.toLowerCase() === lower);
    if (!view) throw new ServiceError('UnknownView', `Resource '${this.name}' has no view '${name}'${this.views.length ? `. Views: ${this.views.map((v) => v.name).join(', ')}` : ''}`);
    return view;
  }

  /** Validates an entity against the schema: 400 InvalidResourceEntity with per-property messages. */
  validate(entity: Entity): void {
    if (!this.validator || this.validator(entity)) return;
    const data: Record<string, string> = {};
    for (const err of this.validator.errors ?? []) {
      const path = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
      const prop = (err.params as { missingProperty?: string; additionalProperty?: string }).missingProperty ?? (err.params as { additionalProperty?: string }).additionalProperty;
      const key = [path, prop].filter(Boolean).join('.') || '(entity)';
      data[key] ??= err.message ?? 'is invalid';
    }
    const summary = Object.entries(data).map(([k, v]) => `${k}: ${v}`).join('; ');
    throw new ServiceError('InvalidResourceEntity', `Invalid ${this.name} entity: ${summary}`, { data });
  }

  private queue: Promise<unknown> = Promise.resolve();

  /** Runs operations one after another on this resource (in this process), e.g. read-then-write upserts. */
  exclusive<T>(run: () => Promise<T>): Promise<T> {
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  output(entity: Entity): Entity {
    return this.definition.toOutput ? this.definition.toOutput(entity) : entity;
  }
}

/** Resources by full name or unique dot-suffix, case-insensitive. */
export class ResourceRegistry {
  private readonly byName = new Map<string, Resource>();
  private readonly bySuffix = new Map<string, Resource[]>();

  add(resource: Resource): void {
    const key = resource.name.toLowerCase();
    if (this.byName.has(key)) throw new Error(`A resource named '${resource.name}' already exists`);
    this.byName.set(key, resource);
    const parts = key.split('.');
    for (let i = 1; i < parts.length; i++) {
      const suffix = parts.slice(i).join('.');
      const list = this.bySuffix.get(suffix) ?? [];
      list.push(resource);
      this.bySuffix.set(suffix, list);
    }
  }

  find(name: string): Resource | undefined {
    return this.byName.get(name.toLowerCase());
  }

  resolve(name: string): Resource {
    const key = name.toLowerCase();
    const exact = this.byName.get(key);
    if (exact) return exact;
    const candidates = this.bySuffix.get(key);
    if (candidates?.length === 1) return candidates[0];
    if (candidates && candidates.length > 1) {
      throw new ServiceError('AmbiguousResource', `'${name}' could mean ${candidates.map((r) => r.name).join(', ')}; use the full name`);
    }
    throw new ServiceError('UnknownResource', `Unknown resource '${name}'`);
  }

  all(): Resource[] {
    return [...this.byName.values()];
  }
}
