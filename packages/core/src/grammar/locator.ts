/**
 * A property locator: `Name`, `Address.City`, `Name.Length`. Matching is
 * case-insensitive; each segment remembers the key it last matched so that uniform
 * data costs one property read per segment instead of a scan of the keys.
 */
export class Locator {
  readonly text: string;
  readonly segments: readonly string[];
  private readonly lower: string[];
  private readonly lastKey: (string | undefined)[];
  private readonly single: boolean;

  constructor(text: string) {
    this.text = text;
    this.segments = text.split('.');
    this.single = this.segments.length === 1;
    this.lower = this.segments.map((s) => s.toLowerCase());
    this.lastKey = this.segments.map(() => undefined);
  }

  get isDotted(): boolean {
    return this.segments.length > 1;
  }

  /** The value at this locator, or undefined when any step is missing. */
  get(entity: unknown): unknown {
    // Fast path for the common case: one segment, read by the key the last entity had.
    if (this.single && typeof entity === 'object' && entity !== null) {
      const key = this.lastKey[0];
      // The remembered spelling serves only when the exact spelling is absent: the exact one wins.
      if (key !== undefined && (key === this.text || (entity as Record<string, unknown>)[this.text] === undefined)) {
        const v = (entity as Record<string, unknown>)[key];
        if (v !== undefined && typeof v !== 'function' && key !== '__proto__') return v;
      }
    }
    let value: unknown = entity;
    for (let i = 0; i < this.segments.length; i++) {
      if (value === null || value === undefined) return undefined;
      value = this.step(value, i);
    }
    return value;
  }

  /**
   * The value on an output entity, where `select`/`add` may have written a dotted
   * locator as one flat key (`{"Address.City": ...}`).
   */
  getOutput(entity: unknown): unknown {
    if (this.segments.length > 1 && entity !== null && typeof entity === 'object') {
      const flat = findKey(entity, this.text);
      if (flat !== undefined) return (entity as Record<string, unknown>)[flat];
    }
    return this.get(entity);
  }

  /**
   * The locator spelled as this entity spells it (`address.city` -> `Address.City`, a
   * string's or array's `length` -> `Length`), or as written when the entity does not have
   * it: never what another entity showed (docs/uri.md, "Output names").
   */
  canonical(entity?: unknown): string {
    return entity === undefined ? this.text : (this.spelledIn(entity) ?? this.text);
  }

  /** The locator spelled as this entity spells it; undefined when a step is missing. */
  spelledIn(entity: unknown): string | undefined {
    const names: string[] = [];
    let value: unknown = entity;
    for (let i = 0; i < this.segments.length; i++) {
      const key =
        value !== null && typeof value === 'object' && !Array.isArray(value) ? findKey(value, this.segments[i], this.lower[i]) : undefined;
      if (key !== undefined) {
        names.push(key);
        value = (value as Record<string, unknown>)[key];
      } else if (this.lower[i] === 'length' && (typeof value === 'string' || Array.isArray(value))) {
        names.push('Length');
        value = undefined;
      } else {
        return undefined;
      }
    }
    return names.join('.');
  }

  private step(value: unknown, i: number): unknown {
    if (typeof value === 'object') {
      const record = value as Record<string, unknown>;
      const last = this.lastKey[i];
      if (last !== undefined && (last === this.segments[i] || record[this.segments[i]] === undefined)) {
        const v = record[last];
        // Functions and __proto__ are inherited (`constructor`, `toString`), never JSON data.
        if (v !== undefined ? typeof v !== 'function' && last !== '__proto__' : Object.prototype.hasOwnProperty.call(record, last))
          return v;
      }
      if (Array.isArray(value)) {
        if (this.lower[i] === 'length') return value.length;
        const index = Number(this.segments[i]);
        return Number.isInteger(index) ? value[index] : undefined;
      }
      const key = findKey(record, this.segments[i], this.lower[i]);
      if (key === undefined) return undefined;
      this.lastKey[i] = key;
      return record[key];
    }
    if (typeof value === 'string' && this.lower[i] === 'length') return codePoints(value);
    return undefined;
  }
}

/**
 * A string's `.Length`: its Unicode code points, as PostgreSQL's length() counts them
 * (`"Turbo 🐢"` is 7; a combining mark is one of its own). A lone surrogate counts as one.
 */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Case-insensitive own-key lookup; the exact spelling wins. */
export function findKey(record: object, name: string, lower = name.toLowerCase()): string | undefined {
  if (Object.prototype.hasOwnProperty.call(record, name)) return name;
  for (const key in record) {
    if (key.length === name.length && key.toLowerCase() === lower && Object.prototype.hasOwnProperty.call(record, key)) return key;
  }
  return undefined;
}
