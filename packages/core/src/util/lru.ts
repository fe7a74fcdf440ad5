interface Entry<V> {
  value: V;
  /** Read since the eviction sweep last passed it. */
  used: boolean;
}

/**
 * A bounded map that forgets an entry not read lately (second chance, or "clock"): a hit
 * only marks its entry, and when the map is full the sweep from the oldest entry moves
 * marked ones to the back, unmarked, and drops the first unmarked one. Moving every hit
 * to the back (delete and set on a Map) cost two Map writes per hit, and a parse-cache
 * hit happens on every request (docs/performance.md).
 */
export class Lru<K, V> {
  private readonly map = new Map<K, Entry<V>>();
  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  set(key: K, value: V): void {
    const entry = this.map.get(key);
    if (entry !== undefined) {
      entry.value = value;
      entry.used = true;
      return;
    }
    this.map.set(key, { value, used: false });
    if (this.map.size > this.max) this.evict();
  }

  private evict(): void {
    // Entries moved to the back are met again, unmarked, after the others: the sweep ends.
    for (const [key, entry] of this.map) {
      this.map.delete(key);
      if (!entry.used) return;
      entry.used = false;
      this.map.set(key, entry);
    }
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
