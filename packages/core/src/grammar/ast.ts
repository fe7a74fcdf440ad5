/** What the Peggy grammar returns: the URI split into its parts, nothing decoded yet. */
export interface RawItem {
  key: string;
  /** The operator as written (`%3C` already mapped to `<`), or null when none was found. */
  op: string | null;
  value: string;
  text: string;
  offset: number;
  /** A condition item with `|`: its alternatives (the item's own fields are the first's). */
  alternatives?: RawItem[];
}

/** @public the generated parser's result type (uri-parser.d.ts) */
export interface RawUri {
  resource: { macro: boolean; name: string; view: string | null; offset: number };
  conditions: RawItem[] | null;
  meta: RawItem[] | null;
  extra: { text: string; offset: number } | null;
}
