import type { ConditionItem } from '../grammar/parse.js';
import { compileConditions, type Entity, type Predicate } from './conditions.js';
import type { Locator } from '../grammar/locator.js';
import type { MetaConditions, OrderKey } from './meta-conditions.js';
import { compileProjection, type Projection } from './projection.js';
import { compileSearch, compileSearchRegex, type SearchPredicate } from './search.js';
import { selectRange, slice, sortEntities, TopK } from './order.js';
import { scanFor, type Scan } from './compiled-scan.js';
import { distinctOutputs } from './distinct.js';

const NO_CONDITIONS: readonly ConditionItem[] = Object.freeze([]);

/**
 * A query compiled once per (resource, conditions, meta-conditions) and run many times.
 * Evaluation order (docs/uri.md): conditions -> search -> add -> rename -> select ->
 * distinct -> order -> offset -> limit.
 */
export interface CompiledQuery {
  conditions: readonly ConditionItem[];
  meta: MetaConditions;
  predicate: Predicate | null;
  search: SearchPredicate | null;
  project: Projection | null;
  /** The order keys read from the stored entity (one per key), when order does not depend on projection. */
  sourceOrder: readonly Locator[] | null;
  /** False: never a generated scan for this query (the service's `compiledQueries: false`). */
  generate?: boolean;
  /**
   * Condition items that read a related resource (`Customer.Name=Ann`, docs/relations.md):
   * not in `conditions` nor `predicate` yet. The request turns them into conditions on this
   * resource's own properties before any operation runs the query.
   */
  through?: readonly ConditionItem[];
}

export function compileQuery(conditions: readonly ConditionItem[], meta: MetaConditions, generate = true): CompiledQuery {
  const predicate = compileConditions(conditions);
  const searches = [meta.search && compileSearch(meta.search), meta.searchRegex && compileSearchRegex(meta.searchRegex)].filter(
    Boolean,
  ) as SearchPredicate[];
  const search: SearchPredicate | null =
    searches.length === 0 ? null : searches.length === 1 ? searches[0] : (e, meter) => searches[0](e, meter) && searches[1](e, meter);
  const projection = compileProjection(meta);
  // sourceOf also refuses an order on a renamed-away name, so it runs even when distinct discards its answer.
  const sources = meta.order ? meta.order.map((k) => projection.sourceOf(k.locator)) : null;
  const sourceOrder = meta.distinct || sources === null || sources.includes(null) ? null : (sources as Locator[]);
  const q: CompiledQuery = { conditions, meta, predicate, search, project: projection.project, sourceOrder };
  if (!generate) q.generate = false;
  return q;
}

/** Whether storage may apply order, offset and limit itself (nothing in between changes the set). */
export function pagingCanBePushedDown(q: CompiledQuery): boolean {
  return q.search === null && !q.meta.distinct && (q.meta.order === null || q.sourceOrder !== null);
}

export interface EvaluateOptions {
  /** The storage already applied the conditions. */
  conditionsApplied?: boolean;
  /** The storage already applied order, offset and limit. */
  pagingApplied?: boolean;
}

/** Pages up to this size are kept while scanning (binary insertion); larger ones are sorted. */
const TOP_K_MAX = 1000;

/** Runs the query over entities in storage order. */
export function evaluate(entities: Iterable<Entity>, q: CompiledQuery, options: EvaluateOptions = {}): Entity[] {
  const predicate = options.conditionsApplied ? null : q.predicate;
  const { search, project, meta } = q;
  const order = options.pagingApplied ? null : meta.order;
  const offset = options.pagingApplied ? 0 : meta.offset;
  const limit = options.pagingApplied ? -1 : meta.limit;
  if (limit === 0) return [];
  // The generated scan replaces the closure plan's loops once the query has run a few times.
  // A predicate without conditions was written by hand (a storage's own): it stays a closure.
  const list = Array.isArray(entities) && (predicate === null || q.conditions.length > 0) ? (entities as Entity[]) : null;
  const conditions = predicate === null ? NO_CONDITIONS : q.conditions;
  const generates = list !== null && q.generate !== false;
  const generated = generates && (predicate !== null || search !== null);

  // Paging alone over an array is a slice: nothing to test, nothing to sort.
  if (order === null && !meta.distinct && predicate === null && search === null && list !== null) {
    const page = slice(list, offset, limit);
    return project === null ? (page === list ? page.slice() : page) : page.map(project);
  }

  // Streaming path: stop scanning as soon as the page is full.
  if (order === null && !meta.distinct && offset >= 0) {
    const scan = generated ? scanFor(conditions, search, null, '') : null;
    if (scan !== null) {
      const page = scan(list!, offset, limit);
      return project === null ? page : page.map(project);
    }
    const out: Entity[] = [];
    let skip = offset;
    for (const e of entities) {
      if (predicate !== null && !predicate(e)) continue;
      if (search !== null && !search(e)) continue;
      if (skip > 0) {
        skip--;
        continue;
      }
      out.push(project === null ? e : project(e));
      if (out.length === limit) break;
    }
    return out;
  }

  // Order on the stored values while they stream past, then project only the page.
  const sourceOrder = order === null ? null : q.sourceOrder;
  const k = offset >= 0 && limit >= 0 ? offset + limit : -1;
  // Kept while scanning: a generated scan (any number of keys) or, for one key, TopK;
  // several keys without a generated scan go through selectRange.
  const one = sourceOrder !== null && sourceOrder.length === 1;
  if (order !== null && sourceOrder !== null && k >= 0 && k <= TOP_K_MAX) {
    const descending = one ? (order[0].descending ? 'd' : 'a') : order.map((key) => (key.descending ? 'd' : 'a')).join('');
    const scan = generates ? scanFor(conditions, search, sourceOrder, descending) : null;
    if (scan !== null) {
      const top = scan(list!, k, 0);
      const page = offset === 0 ? top : top.slice(offset);
      return project === null ? page : page.map(project);
    }
  }
  if (order !== null && sourceOrder !== null && one && k >= 0 && k <= TOP_K_MAX) {
    const source = sourceOrder[0];
    const descending = order[0].descending;
    const top = new TopK<Entity>(k, descending);
    const all = Array.isArray(entities) ? (entities as Entity[]) : [...entities];
    for (let i = 0; i < all.length; i++) {
      const e = all[i];
      if (predicate !== null && !predicate(e)) continue;
      if (search !== null && !search(e)) continue;
      top.offer(source.get(e), e);
    }
    const page = offset === 0 ? top.items : top.items.slice(offset);
    return project === null ? page : page.map(project);
  }

  const matches = allMatches(entities, list, generated ? scanFor(conditions, search, null, '') : null, predicate, search);

  if (order !== null && sourceOrder !== null) {
    const page =
      sourceOrder.length === 1
        ? selectRange(matches, (e) => sourceOrder[0].get(e), order[0].descending, offset, limit)
        : selectRange(
            matches,
            (e) => sourceOrder.map((l) => l.get(e)),
            directions(order),
            offset,
            limit,
            (e) => sourceOrder[0].get(e),
          );
    return project === null ? page : page.map(project);
  }

  let output = meta.distinct ? distinctOutputs(matches, meta, project) : project === null ? matches : matches.map(project);
  if (order !== null) {
    if (order.length === 1) {
      const locator = order[0].locator;
      output = sortEntities(output, (e) => locator.getOutput(e), order[0].descending);
    } else output = sortEntities(output, (e) => order.map((k) => k.locator.getOutput(e)), directions(order));
  }
  const page = slice(output, offset, limit);
  // The stored array itself is never handed out: callers may change what they get.
  return page === list ? page.slice() : page;
}

function directions(order: readonly OrderKey[]): boolean[] {
  return order.map((k) => k.descending);
}

/** Every entity that passes; the given array itself when there is nothing to test. */
function allMatches(
  entities: Iterable<Entity>,
  list: readonly Entity[] | null,
  scan: Scan | null,
  predicate: Predicate | null,
  search: SearchPredicate | null,
): Entity[] {
  if (scan !== null) return scan(list!, 0, -1);
  // Read, never changed: evaluate copies it if it would hand it out.
  if (predicate === null && search === null && list !== null) return list as Entity[];
  const matches: Entity[] = [];
  for (const e of entities) {
    if (predicate !== null && !predicate(e)) continue;
    if (search !== null && !search(e)) continue;
    matches.push(e);
  }
  return matches;
}
