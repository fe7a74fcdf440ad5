import { ServiceError } from '../errors.js';
import type { Entity, Predicate } from './conditions.js';
import type { SearchPredicate } from './search.js';

/** Characters of text one request's search and search_regex may scan (default 32 Mi). */
export const DEFAULT_SEARCH_BUDGET = 32 * 1024 * 1024;
/** The scan gives other requests a turn after this many characters. */
const YIELD_EVERY = 256 * 1024;

/** Counts the characters one request's search scans; over the budget it stops the request (400). */
export class ScanMeter {
  scanned = 0;
  sinceYield = 0;

  constructor(readonly budget: number) {}

  add(characters: number): void {
    this.scanned += characters;
    this.sinceYield += characters;
    if (this.scanned > this.budget) {
      throw new ServiceError(
        'InvalidMetaConditionValueType',
        `search and search_regex may scan at most ${this.budget} characters per request (the service option searchBudget); narrow the request with conditions, a property scope or a limit`,
      );
    }
  }
}

export interface ScanOptions {
  /** Conditions still to apply (null when storage applied them). */
  predicate: Predicate | null;
  search: SearchPredicate;
  budget: number;
  /** Stop once this many entities matched (-1: all). */
  enough: number;
}

/**
 * The entities that pass the conditions and the search, scanned so that other requests
 * keep being answered: the loop yields to the event loop every YIELD_EVERY characters.
 */
export async function scanSearch(entities: Iterable<Entity>, options: ScanOptions): Promise<Entity[]> {
  const { predicate, search, enough } = options;
  const meter = new ScanMeter(options.budget);
  const out: Entity[] = [];
  for (const e of entities) {
    if (predicate !== null && !predicate(e)) continue;
    if (search(e, meter)) {
      out.push(e);
      if (out.length === enough) break;
    }
    if (meter.sinceYield >= YIELD_EVERY) {
      meter.sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return out;
}
