/**
 * Condition value literals. An unquoted value keeps its text and every typed reading it
 * allows. A number compares with numbers only: against a string value it is a mixed pair
 * (`Price>10` never matches "8.00"; `=` false, `!=` true, ordering false), and a quoted
 * literal (`Zip='02139'`) compares text (docs/uri.md, "Values"). Booleans and plain words
 * still compare with a string value's text.
 */
export type Literal =
  | { kind: 'null' }
  /** A value that can only be a string: quoted, or empty. */
  | { kind: 'string'; value: string }
  /** An unquoted value with every typed reading it allows. */
  | {
      kind: 'raw';
      text: string;
      number?: number;
      boolean?: boolean;
      date?: number;
      /**
       * With `number`: a string value equal to the text matches too. Only a bare key
       * (`/posts/1`) is read so, since keys stored as strings ("1", json-server's) are
       * addressed the same way (docs/keys.md).
       */
      asText?: boolean;
    };

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const ISO_DATE = /^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[-+]\d\d:?\d\d)?)?$/;

export function parseLiteral(text: string): Literal {
  if (text === 'null') return { kind: 'null' };
  if (text === '') return { kind: 'string', value: '' };
  const first = text[0];
  if (text.length >= 2 && (first === "'" || first === '"') && text[text.length - 1] === first) {
    return { kind: 'string', value: text.slice(1, -1) };
  }
  // Each literal is made whole, never grown by a property: an IN list makes one per alternative.
  if (text === 'true') return { kind: 'raw', text, boolean: true };
  if (text === 'false') return { kind: 'raw', text, boolean: false };
  if (NUMBER.test(text)) return { kind: 'raw', text, number: Number(text) };
  const time = isoTime(text);
  return time === undefined ? { kind: 'raw', text } : { kind: 'raw', text, date: time };
}

/** A bare key value: a number in it also matches its text stored as a string. */
export function parseKeyLiteral(text: string): Literal {
  const literal = parseLiteral(text);
  return literal.kind === 'raw' && literal.number !== undefined ? { ...literal, asText: true } : literal;
}

/** Milliseconds of an ISO 8601 date string, or undefined when it is not one. */
export function isoTime(text: string): number | undefined {
  if (text.length < 10 || text.length > 35 || !ISO_DATE.test(text)) return undefined;
  const time = Date.parse(text);
  return Number.isNaN(time) ? undefined : time;
}

/** The literal as a JSON value (for inserting a PUT's condition values). */
export function literalValue(literal: Literal): unknown {
  if (literal.kind === 'null') return null;
  if (literal.kind === 'string') return literal.value;
  return literal.boolean ?? literal.number ?? literal.text;
}
