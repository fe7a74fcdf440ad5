import type { Caller } from './caller.js';
import { ServiceError } from '../errors.js';
import { parseUri, type ConditionItem } from '../grammar/parse.js';
import type { Method } from '../http/types.js';
import { LRUCache } from 'lru-cache';
import { compileConditions, type Entity, type Predicate } from '../query/conditions.js';
import { typeConditions, type JsonSchema } from '../query/schema-types.js';

/**
 * Who may use a resource, and which of its rows (docs/in-app.md). Both are asked with the
 * caller and the method, REPORT and HEAD asked as GET.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- defaults that accept any app context and principal
export interface ResourceRules<T extends object = Entity, C = any, P = any> {
  /** Whether the caller may use the method at all; false answers 403 Forbidden. */
  allow?: (caller: Caller<C, P>, method: Method) => boolean;
  /**
   * The rows the caller may read and write: conditions in the URI syntax (`Owner=ann`,
   * pushed down to storage like any condition), a predicate over the entity as clients
   * see it (filtered in memory), or undefined/null for every row. ANDed into every query
   * and checked on every entity written.
   */
  rows?: (caller: Caller<C, P>, method: Method) => string | ((entity: T) => boolean) | undefined | null;
}

/** A row rule ready to run: conditions ANDed into the query, or a predicate applied after storage. */
export interface RowRule {
  /** Conditions to add to the request's (empty for a predicate rule). */
  conditions: readonly ConditionItem[];
  /** A predicate storage cannot see, applied to what storage returns; null for a conditions rule. */
  filter: Predicate | null;
  /** Whether an entity (output form) lies inside the rule: checked on writes. */
  test: Predicate;
  /** The conditions as the rule wrote them (`Owner=ann`); undefined for a predicate rule. */
  text?: string;
}

/** Compiles the row rules of one resource, caching condition texts (rules usually vary by user, not by request). */
export class RowRules {
  private readonly compiled = new LRUCache<string, RowRule>({ max: 1000 });

  constructor(
    private readonly resource: string,
    private readonly rules: ResourceRules['rows'],
    private readonly schema: JsonSchema | undefined,
  ) {}

  /** The rule for this caller and method, or null when it sees every row. */
  for(caller: Caller, method: Method): RowRule | null {
    if (this.rules === undefined) return null;
    const rule = this.rules(caller, method);
    if (rule === undefined || rule === null) return null;
    if (typeof rule === 'function') return { conditions: [], filter: rule, test: rule };
    let compiled = this.compiled.get(rule);
    if (compiled === undefined) {
      compiled = this.compile(rule);
      this.compiled.set(rule, compiled);
    }
    return compiled;
  }

  private compile(text: string): RowRule {
    const parsed = parseUri(`/_/${text}`);
    // A broken rule is the app's bug, not the caller's: a 500 that names the resource (details to onError).
    if (parsed.error || parsed.meta.length > 0)
      throw new ServiceError(
        'Unknown',
        `The row rule '${text}' of '${this.resource}' is not a list of conditions${parsed.error ? `: ${parsed.error.message}` : ''}`,
      );
    return compileRowConditions(text, parsed.conditions, this.schema);
  }
}

/** A conditions row rule, typed by the resource's schema. */
function compileRowConditions(text: string, parsed: readonly ConditionItem[], schema: JsonSchema | undefined): RowRule {
  const conditions = typeConditions(parsed, schema);
  const predicate = compileConditions(conditions);
  return { conditions, filter: null, test: predicate ?? (() => true), text };
}

const NO_ROW: Predicate = () => false;

/**
 * The test of a row rule's text kept with a webhook (its author's rows). A text that no
 * longer compiles (edited storage, a changed schema) lets no row through, never every row.
 */
export function storedRowTest(text: string, schema: JsonSchema | undefined): Predicate {
  try {
    const parsed = parseUri(`/_/${text}`);
    if (parsed.error || parsed.meta.length > 0) return NO_ROW;
    return compileRowConditions(text, parsed.conditions, schema).test;
  } catch {
    return NO_ROW;
  }
}

/** 403 when an entity to write lies outside the caller's rows. */
export function checkRow(rule: RowRule | null, entity: Entity, resource: string): void {
  if (rule !== null && !rule.test(entity))
    throw new ServiceError('Forbidden', `This entity lies outside the rows of '${resource}' you may write`);
}
