import { ServiceError } from '../errors.js';
import { nextTurn } from './turn.js';

/** Default for `maxNestingDepth`: far deeper than real data, far shallower than what overflows a stack. */
export const DEFAULT_MAX_NESTING = 64;
/** The highest `maxNestingDepth` accepted: JSON.stringify and other recursive walks stay well inside the stack. */
export const MAX_NESTING_LIMIT = 1000;
/** Default for `maxEntities`, the most entities one request writes (docs/limits.md). */
export const DEFAULT_MAX_ENTITIES = 100_000;

/**
 * Whether `value` nests objects and arrays deeper than `limit` levels (an entity `{}` is
 * level 1). Walks with an explicit stack, so any depth JSON.parse accepts is measured
 * without recursion, and stops at the first level past the limit.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item === 'object') stack.push([item, depth + 1]);
    } else {
      for (const key in v) {
        const item = (v as Record<string, unknown>)[key];
        if (item !== null && typeof item === 'object') stack.push([item, depth + 1]);
      }
    }
  }
  return false;
}

/** 400 InvalidResourceEntity when an input that becomes entities nests deeper than the limit. */
export function checkNesting(entities: readonly unknown[], limit: number, first = 0, total = entities.length): void {
  for (let i = 0; i < entities.length; i++) {
    if (nestsDeeperThan(entities[i], limit)) {
      const which = total > 1 ? `Item ${first + i} of the body` : 'The body';
      throw new ServiceError(
        'InvalidResourceEntity',
        `${which} nests objects and arrays deeper than ${limit} levels, the limit (service option maxNestingDepth)`,
      );
    }
  }
}

/** Entities checked between two turns of the event loop by checkNestingInSlices. */
const CHECKED_PER_TURN = 2000;

/** checkNesting, a turn of the event loop between slices of a large input (docs/limits.md#large-work). */
export async function checkNestingInSlices(entities: readonly unknown[], limit: number): Promise<void> {
  for (let from = 0; from < entities.length; from += CHECKED_PER_TURN) {
    if (from > 0) await nextTurn();
    checkNesting(entities.slice(from, from + CHECKED_PER_TURN), limit, from, entities.length);
  }
}
