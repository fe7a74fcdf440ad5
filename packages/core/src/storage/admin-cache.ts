import type { Storage } from './storage.js';

/** How often a cache asks a shared storage whether another instance changed it. */
const RECHECK_MS = 500;
/** How long a cache over a storage without change tokens is trusted. */
const RELOAD_MS = 1_000;

/**
 * A value loaded from an admin storage (macros, webhooks) that stays correct when other
 * service instances write the same storage: a storage with `changeToken` is asked at
 * most every RECHECK_MS (or on every `strict` read) and reloaded only when its token
 * moved; a storage without one is reloaded after RELOAD_MS. Writes made through this
 * instance call invalidate(). So another instance's change is in force within 1 s.
 */
export class AdminCache<T> {
  private value: { data: T; token: string | undefined; checked: number } | null = null;
  /** Counts invalidations, so a load that a write overtook is not kept. */
  private generation = 0;

  constructor(
    private readonly storage: Storage,
    private readonly load: () => Promise<T>,
    /** Called when a cached value is dropped (derived caches clear themselves). */
    private readonly onDrop: () => void = () => {},
  ) {}

  invalidate(): void {
    this.generation++;
    this.value = null;
    this.onDrop();
  }

  /** Whether a value derived from the current one may be kept (no invalidation since `generation`). */
  current(generation: number): boolean {
    return generation === this.generation;
  }

  get version(): number {
    return this.generation;
  }

  /**
   * The value. `strict` asks a token-bearing storage every time, for readers that must not
   * miss a change committed before they ran (webhook matching: no event lost).
   */
  async get(strict = false): Promise<T> {
    const now = Date.now();
    const cached = this.value;
    const token = this.storage.changeToken ? this.storage.changeToken.bind(this.storage) : undefined;
    if (cached !== null) {
      if (token === undefined) {
        if (now - cached.checked < RELOAD_MS) return cached.data;
      } else if (!strict && now - cached.checked < RECHECK_MS) {
        return cached.data;
      } else {
        const latest = await token();
        if (latest === cached.token) {
          cached.checked = now;
          return cached.data;
        }
      }
      this.invalidate();
    }
    const generation = this.generation;
    // The token is read before the data: a write between the two makes the next check reload.
    const before = token === undefined ? undefined : await token();
    const data = await this.load();
    if (generation === this.generation) this.value = { data, token: before, checked: now };
    return data;
  }
}
