import type { Entity, Locator } from '@resourcery/core/storage';
import { pgArray } from './indexes.js';
import type { Params } from './translate.js';

/** The most spellings (case variants) of the selected names one query checks per row. */
const MAX_SPELLINGS = 128;

/**
 * Every key the Locator would match for `name`: it compares `key.toLowerCase()` with the
 * lower-cased name, lengths equal, so each character of such a key lower-cases to the
 * name's: an ASCII letter comes in both cases (and `k` as KELVIN SIGN too), anything
 * else as it is. Null past `limit` spellings.
 */
function spellings(name: string, limit: number): string[] | null {
  let out = [''];
  for (const c of name) {
    const lower = c.toLowerCase();
    const forms = !/[a-z]/i.test(c) ? [c] : lower === 'k' ? ['k', 'K', '\u212A'] : [lower, c.toUpperCase()];
    if (out.length * forms.length > limit) return null;
    out = out.flatMap((prefix) => forms.map((f) => prefix + f));
  }
  return out;
}

/**
 * The stored spellings of the names `select` reads, learnt from the rows returned, so
 * that a client writing `select=name` over data spelling it `Name` still gets the cut rows.
 */
export class Spellings {
  private readonly known = new Map<string, string>();

  of(name: string): string {
    return this.known.get(name.toLowerCase()) ?? name;
  }

  learn(locators: readonly Locator[], entity: Entity | undefined): void {
    if (entity === undefined) return;
    for (const l of locators) {
      const lower = l.segments[0].toLowerCase();
      const key = Object.keys(entity).find((k) => k.length === lower.length && k.toLowerCase() === lower);
      if (key === undefined) continue;
      // Names come from requests: a bounded memory.
      if (this.known.size >= 1000) this.known.clear();
      this.known.set(lower, key);
    }
  }
}

/**
 * The body of a row cut to the top-level properties the service reads (SelectQuery.select),
 * as a scalar subquery on `row` (alias with `body` and `doc`), or null when not worth it or
 * not exact here: a dotted locator (the value is mostly an object, whose key order only
 * the stored text keeps, and the dotted text may be a key of its own), a name that is not
 * printable ASCII, too many case variants to rule out. A row is cut only when the Locator
 * would read the spelling looked up (it takes the key spelt as select spells it, else the
 * first matching key in key order, which jsonb does not keep): the row holds that spelling
 * and select spells it so, or the row has no other spelling of the name; and no object or
 * array there. Any other row comes whole. `doc` is detoasted once (`|| '{}'`), not once
 * per lookup.
 */
export function projectedBody(locators: readonly Locator[], row: string, params: Params, known: Spellings): string | null {
  if (locators.some((l) => l.isDotted || !/^[\x20-\x7e]+$/.test(l.text))) return null;
  const names = [...new Map(locators.map((l) => [l.text.toLowerCase(), known.of(l.text)])).values()];
  const mark = params.values.length;
  let budget = MAX_SPELLINGS;
  const tests: string[] = [];
  const members: string[] = [];
  for (const name of names) {
    const forms = spellings(name, budget);
    if (forms === null) return params.reset(mark);
    budget -= forms.length;
    const others = forms.filter((f) => f !== name);
    const key = params.add(name);
    // A row holding the spelling every locator of this name uses is exact whatever other
    // spellings it has: one lookup, where ruling the others out costs one each.
    const exact = locators.every((l) => l.text === name || l.text.toLowerCase() !== name.toLowerCase());
    if (others.length > 0) {
      const variants = `NOT x.d ?| (${params.add(pgArray(others))})::text[]`;
      tests.push(exact ? `(x.d ? ${key} OR ${variants})` : variants);
    }
    tests.push(`coalesce(jsonb_typeof(x.d -> ${key}) NOT IN ('object', 'array'), true)`);
    members.push(`CASE WHEN x.d ? ${key} THEN ${params.add(`${JSON.stringify(name)}:`)} || (x.d -> ${key})::text END`);
  }
  return (
    `(SELECT CASE WHEN ${tests.join(' AND ')} THEN '{' || concat_ws(',', ${members.join(', ')}) || '}' ELSE ${row}.body END ` +
    `FROM (SELECT ${row}.doc || '{}'::jsonb AS d OFFSET 0) x)`
  );
}
