import { createHash } from 'node:crypto';
import { ServiceError, type Entity } from '@resourcery/core';
import { type IndexedProperty, type StorageIndex } from '@resourcery/core/storage';

/** A property name as an SQL string literal: declared by the developer, never request text. */
const literal = (name: string) => `'${name.replace(/'/g, "''")}'`;

/** The stored value of an indexed property: jsonb, SQL NULL when missing. */
export const valueOf = (p: IndexedProperty, alias = 'r.') => `(${alias}doc -> ${literal(p.name)})`;

/** A string property's text, compared and sorted as JavaScript does (code units: "C"). */
export const textOf = (p: IndexedProperty, alias = 'r.') => `((${alias}doc ->> ${literal(p.name)}) COLLATE "C")`;

/** What the index keeps for a property: the form queries compare and sort. */
const keyOf = (p: IndexedProperty, index: StorageIndex) => {
  if (index.ignoreCase) return `lower(doc ->> ${literal(p.name)})`;
  // Missing values first ascending, last descending: the order queries ask for (translateOrder).
  return `${p.type === 'string' ? textOf(p, '') : valueOf(p, '')}${p.type === undefined ? '' : ' NULLS FIRST'}`;
};

/**
 * The row id, last in a non-unique index whose last property is typed: queries order ties
 * by id ascending (the stable order MemoryStorage gives), and a backward scan of
 * `(..., Score NULLS FIRST, id DESC)` gives `Score DESC NULLS LAST, id ASC`, so a page of
 * the last property's descending order (`order_desc=Score&limit=10`, the top of a ranking,
 * the newest first) is read in order with no sort of its ties; with equality on every
 * property (a key lookup) either direction gives `id ASC`. The ascending order still sorts
 * each run of ties by id, as every order did before (docs/storage.md#indexes).
 */
const TIE_BREAK = 'id DESC';

/** Whether an index ends with the row id: not a unique one (the id would make every row unique). */
const tieBroken = (index: StorageIndex) =>
  !index.unique && !index.ignoreCase && index.properties[index.properties.length - 1]?.type !== undefined;

/**
 * The indexes a resource declared (core ResourceDefinition.indexes), as the SQL storage
 * builds and uses them. Queries read an indexed property straight from `doc -> 'Name'`
 * (what the index holds) instead of the case-insensitive lookup, which is exact only
 * while every entity spells the property as declared: writes spelling it otherwise are
 * refused, and rows stored before (or behind the storage's back) that do switch the
 * direct reads off.
 */
export class DeclaredIndexes {
  private indexes: readonly StorageIndex[] = [];
  /** Indexed properties by lower-case name, while every stored row spells them as declared. */
  private usable = new Map<string, IndexedProperty>();
  private declared = new Map<string, IndexedProperty>();

  declare(indexes: readonly StorageIndex[]): void {
    this.indexes = indexes;
    this.declared = new Map();
    for (const index of indexes) {
      for (const p of index.properties) {
        const known = this.declared.get(p.name.toLowerCase());
        // The same property in two indexes with two types: trust neither type.
        this.declared.set(p.name.toLowerCase(), known && known.type !== p.type ? { name: p.name } : p);
      }
    }
    this.usable = new Map();
  }

  get empty(): boolean {
    return this.indexes.length === 0;
  }

  /** The indexed property a one-segment locator reads, when queries may read it directly. */
  property(lowerName: string): IndexedProperty | undefined {
    return this.usable.get(lowerName);
  }

  /** CREATE INDEX statements (IF NOT EXISTS: every instance runs them). */
  ddl(table: string, quoted: string): string[] {
    return this.indexes.map((index) => {
      const keys = index.properties.map((p) => keyOf(p, index));
      if (tieBroken(index)) keys.push(TIE_BREAK);
      const name = indexName(table, keys, index.unique);
      return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${name} ON ${quoted} (${keys.join(', ')})`;
    });
  }

  /**
   * Turns the direct reads on for properties no stored row spells otherwise (one scan of
   * the table when the storage starts; ASCII folding plus KELVIN SIGN, as segmentOf).
   */
  async check(quoted: string, query: (text: string, params?: string[]) => Promise<Array<{ name: string }>>): Promise<void> {
    if (this.declared.size === 0) return;
    const names = [...this.declared.values()].map((p) => p.name);
    const rows = await query(
      `SELECT DISTINCT lower(translate(k, chr(8490), 'k') COLLATE "C") AS name FROM ${quoted} r, jsonb_object_keys(r.doc) k ` +
        `WHERE lower(translate(k, chr(8490), 'k') COLLATE "C") = ANY($1::text::text[]) AND NOT k = ANY($2::text::text[])`,
      [pgArray(names.map((n) => n.toLowerCase())), pgArray(names)],
    );
    const misspelled = new Set(rows.map((r) => r.name));
    // Names that fold beyond ASCII fold differently in JavaScript and PostgreSQL: never direct.
    this.usable = new Map([...this.declared].filter(([lower]) => !misspelled.has(lower) && ASCII.test(lower)));
  }

  /** 400 for an entity that spells an indexed property otherwise than declared. */
  checkSpelling(entities: Iterable<Entity>): void {
    if (this.declared.size === 0) return;
    for (const e of entities) {
      for (const key of Object.keys(e)) {
        const p = this.declared.get(key.toLowerCase());
        if (p !== undefined && p.name !== key) {
          throw new ServiceError(
            'InvalidResourceEntity',
            `Spell the property '${key}' as '${p.name}': the resource declares an index on '${p.name}'`,
            { data: { [key]: `spell it '${p.name}'` } },
          );
        }
      }
    }
  }
}

/** A text of ASCII characters only: folded alike by JavaScript and by lower() under COLLATE "C". */
// eslint-disable-next-line no-control-regex -- the whole ASCII range
export const ASCII = /^[\x00-\x7f]*$/;

/** `rx_<hash>`: one name per table and index definition, within PostgreSQL's 63 characters. */
export function indexName(table: string, ...definition: unknown[]): string {
  return `rx_${createHash('sha256')
    .update(JSON.stringify([table, ...definition]))
    .digest('hex')
    .slice(0, 20)}`;
}

/** A PostgreSQL array literal of strings. */
export function pgArray(values: string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}
