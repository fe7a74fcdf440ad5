import type { Entity } from '@resourcery/core/storage';

/** Where an entity handed out lives, and which version of the row it showed. */
export interface RowKey {
  id: string;
  version: string;
}

/** A row key and the storage that issued it (one object an entity). */
interface HeldKey extends RowKey {
  owner: object;
}

/** Returns the object it is given, so that a subclass's field is added to that object. */
class Carrier {
  constructor(target: object) {
    return target;
  }
}

/**
 * Row keys held by the entities themselves, in a private field (docs/storage.md#versions-and-conditional-writes): a
 * field the storage adds to an object it parsed costs about a tenth of a WeakMap entry (a
 * WeakMap of 20,000 entities a select took ~1.5 µs each, and its collector work), and, like
 * the WeakMap, it is invisible to the entity's readers (not a key, not copied by a spread,
 * not in JSON text, not seen by Reflect.ownKeys) and lives as long as the entity does. The
 * key names the storage that issued it, so another storage never takes it for its own.
 */
class Stamped extends Carrier {
  #key: HeldKey;

  private constructor(target: object, key: HeldKey) {
    super(target);
    this.#key = key;
  }

  /** Gives `entity` the key `key` (replacing one it had). */
  static set(entity: Entity, key: HeldKey): void {
    if (#key in entity) (entity as unknown as Stamped).#key = key;
    else new Stamped(entity, key);
  }

  static get(entity: Entity, owner: object): RowKey | undefined {
    if (!(#key in entity)) return undefined;
    const held = (entity as unknown as Stamped).#key;
    return held.owner === owner ? held : undefined;
  }
}

/** The row keys of the entities one storage handed out or wrote. */
export class RowKeys {
  constructor(private readonly owner: object) {}

  set(entity: Entity, id: string, version: string): void {
    Stamped.set(entity, { owner: this.owner, id, version });
  }

  get(entity: Entity): RowKey | undefined {
    return Stamped.get(entity, this.owner);
  }
}
