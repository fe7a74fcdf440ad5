import { ServiceError } from '../errors.js';
import type { Entity, Predicate } from './conditions.js';
import type { SearchPredicate } from './search.js';
import { nextTurn } from '../util/turn.js';

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
        `search and search_regex may scan at most ${this.budget} characters per request (the service option searchBudget; limits.searchBudget in the CLI's config, or --search-budget); narrow the request with conditions, a property scope or a limit`,
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
 * keep being answered: the scan gives way to the event loop every YIELD_EVERY characters.
 * Each stretch is a synchronous call: an async function resumed after `await` re-enters
 * its loop unoptimised, which made a scan of a million entities several times slower.
 */
export async function scanSearch(entities: readonly Entity[], options: ScanOptions): Promise<Entity[]> {
  const meter = new ScanMeter(options.budget);
  const out: Entity[] = [];
  let i = 0;
  for (;;) {
    i = scanStretch(entities, i, options, meter, out);
    if (i >= entities.length || out.length === options.enough) return out;
    meter.sinceYield = 0;
    await nextTurn();
  }
}

/** Scans from `i` until the end, a full page or YIELD_EVERY characters; returns where it stopped. */
function scanStretch(entities: readonly Entity[], i: number, options: ScanOptions, meter: ScanMeter, out: Entity[]): number {
  const { predicate, search, enough } = options;
  while (i < entities.length) {
    const e = entities[i++];
    if (predicate !== null && !predicate(e)) continue;
    if (search(e, meter) && out.push(e) === enough) break;
    if (meter.sinceYield >= YIELD_EVERY) break;
  }
  return i;
}
