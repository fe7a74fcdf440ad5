import { MAX_NESTING_LIMIT, nestsDeeperThan } from '../util/nesting.js';
import { decodeLoose } from '../util/uri-decode.js';

/**
 * Which values Error records replace by ***** (docs/security.md#redaction): headers,
 * JSON body properties at any depth, form fields, URI conditions and query parameters
 * whose names look like credentials, plus those the app names and the headers its
 * `authenticate` reads.
 */
export interface RedactionOptions {
  /** More header names (any case) or patterns, beside the default ones. */
  headers?: ReadonlyArray<string | RegExp>;
  /** More body-property, form-field and URI-condition names (any case) or patterns. */
  properties?: ReadonlyArray<string | RegExp>;
}

/** Names that carry credentials or sessions: X-Auth-Token, X-Session, private_key, sessionId, client_secret. */
const CREDENTIAL_NAME = /token|secret|session|passw|key|auth|cookie|credential/i;
/** URI parameters that carry a signature of a signed URL. */
const SIGNATURE = /^(sig|signature)$/i;
const MASK = '*****';

/** Whether a name looks like a credential by the default patterns. */
function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** `[Name: value]`, as Source and Destination headers write their own headers. */
const BRACKETED = new RegExp(`\\[\\s*(${TOKEN})(\\s*:\\s*)([^\\]]*)\\]`, 'g');
/** `Name: value` up to the next `Name:` or the end. */
const PLAIN = new RegExp(`(^|\\s)(${TOKEN})(:\\s+)(.*?)(?=\\s${TOKEN}:\\s|$)`, 'gs');

type Matcher = (name: string) => boolean;

function matcher(list: ReadonlyArray<string | RegExp> | undefined): Matcher | null {
  if (list === undefined || list.length === 0) return null;
  const names = new Set(list.filter((p): p is string => typeof p === 'string').map((p) => p.toLowerCase()));
  const patterns = list.filter((p): p is RegExp => p instanceof RegExp);
  return (name) => names.has(name.toLowerCase()) || patterns.some((p) => p.test(name));
}

/** How much of a failed request's body a record keeps. */
const MAX_BODY_TEXT = 16384;
/**
 * Bodies of more bytes are handed to `body` as their first RECORD_PREFIX_BYTES only, with
 * their size: no text of the whole is made for a record that keeps 16 KiB of it (one
 * string of megabytes is a copy in one turn), and the part kept is redacted as text
 * (docs/limits.md#large-work). The prefix holds at least twice the part kept, whatever the
 * characters (at most 4 UTF-8 bytes per 2 UTF-16 units).
 */
export const RECORD_WHOLE_BODY_BYTES = 1024 * 1024;
export const RECORD_PREFIX_BYTES = 4 * MAX_BODY_TEXT * 2;

/** A failed request's body as an error record gets it: the whole text, or (past RECORD_WHOLE_BODY_BYTES) its prefix and size. */
export interface RecordBody {
  text: string;
  /** Set when `text` is the body's first RECORD_PREFIX_BYTES bytes only: the whole body's size in bytes. */
  bytes?: number;
}

export class Redaction {
  private readonly extraHeaders: Matcher | null;
  private readonly extraProperties: Matcher | null;
  /** Header names the app's `authenticate` read: they carry who the caller is. */
  private readonly learned = new Set<string>();

  constructor(options: RedactionOptions = {}) {
    for (const list of [options.headers, options.properties])
      for (const p of list ?? [])
        if (typeof p !== 'string' && !(p instanceof RegExp))
          throw new Error('redact lists hold header or property names and regular expressions');
    this.extraHeaders = matcher(options.headers);
    this.extraProperties = matcher(options.properties);
  }

  /** Remembers a header the app's authenticate read (lower-case). */
  learn(name: string): void {
    if (!this.learned.has(name) && this.learned.size < 64) this.learned.add(name);
  }

  /** Whether a header's value is replaced (lower-case name). */
  header(name: string): boolean {
    return isCredentialName(name) || this.learned.has(name) || (this.extraHeaders?.(name) ?? false);
  }

  /** Whether a body property's, form field's or URI condition's value is replaced. */
  property(name: string): boolean {
    return isCredentialName(name) || (this.extraProperties?.(name) ?? false);
  }

  /** `<name>: <value>` joined with ` | `, credentials replaced; inline ones (`[Authorization: k]` in Source) too. */
  headers(headers: Readonly<Record<string, string>>): string {
    return Object.entries(headers)
      .map(
        ([name, value]) =>
          `${name}: ${this.header(name) ? MASK : name === 'source' || name === 'destination' ? this.inline(value) : value}`,
      )
      .join(' | ');
  }

  /** Header values written inline (`[X-Auth-Token: t]`, or plain `Authorization: apikey k`) replaced. */
  inline(text: string): string {
    const bracketed = text.replace(BRACKETED, (m, name: string, sep: string) =>
      this.header(name.toLowerCase()) ? `[${name}${sep}${MASK}]` : m,
    );
    return bracketed.replace(PLAIN, (m, before: string, name: string, sep: string) =>
      this.header(name.toLowerCase()) ? `${before}${name}${sep}${MASK}` : m,
    );
  }

  /**
   * The body with the values of credential-like properties replaced: at any depth of a
   * JSON body, and in a form-encoded body; then cut to MAX_BODY_TEXT. Redacted before the
   * cut, so a long body cannot hide a secret past it.
   */
  body({ text, bytes }: RecordBody, contentType = ''): string {
    const size = bytes === undefined ? undefined : `${bytes} bytes`;
    // A body of megabytes (handed over as its prefix) is not parsed and walked: the part kept
    // (and a margin) is redacted as text, as malformed JSON is.
    if (bytes !== undefined && /^\s*[[{]/.test(text))
      return truncate(this.jsonPrefix(text.slice(0, 2 * MAX_BODY_TEXT)), MAX_BODY_TEXT, size);
    return truncate(this.bodyText(text, contentType), MAX_BODY_TEXT, size);
  }

  private bodyText(text: string, contentType: string): string {
    if (text === '') return text;
    if (/^\s*[[{]/.test(text)) return this.json(text);
    if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
      const form = new URLSearchParams(text);
      let changed = false;
      for (const key of [...form.keys()])
        if (this.property(key)) {
          form.set(key, MASK);
          changed = true;
        }
      return changed ? form.toString() : text;
    }
    return text;
  }

  /** A URI with the values of credential-like conditions (`/User/Token=abc`) and query parameters (`?apikey=`) replaced. */
  uri(uri: string): string {
    const q = uri.indexOf('?');
    const path = q < 0 ? uri : uri.slice(0, q);
    const redactedPath = path.replace(
      // A value runs on through the alternatives after it that have no locator (`Token=a|b`, docs/uri.md).
      /(^|[/&|;])([^/&|;=<>!~]+)(!=|<=|>=|=|<|>|!~|~)([^/&|;]*(?:\|(?![^/&|;=<>!~]+(?:[=<>!~]))[^/&|;]*)*)/g,
      (m, sep: string, name: string, op: string) => (this.property(decodeLoose(name)) ? `${sep}${name}${op}${MASK}` : m),
    );
    if (q < 0) return redactedPath;
    return (
      redactedPath +
      uri.slice(q).replace(/([?&;])([^=&;]*)=([^&;]*)/g, (m, sep: string, key: string) => {
        const name = decodeLoose(key);
        return this.property(name) || SIGNATURE.test(name) ? `${sep}${key}=${MASK}` : m;
      })
    );
  }

  /** Values of credential-like properties in text that is not valid JSON: `"password": "x"` -> `"password": "*****"`. */
  private malformedJson(text: string): string {
    return text.replace(/("((?:[^"\\]|\\.)*)"\s*:\s*)("(?:[^"\\]|\\.)*"?|[^,}\]\s]+)/g, (m, head: string, key: string) =>
      this.property(key) ? `${head}"${MASK}"` : m,
    );
  }

  /**
   * The start of a JSON text (cut anywhere) with the value of every credential-like
   * property replaced, at any depth: a string or scalar, or a whole object or array (as
   * json() replaces them), up to the cut when it runs past it.
   */
  private jsonPrefix(text: string): string {
    const key = /"((?:[^"\\]|\\.)*)"\s*:\s*/g;
    let out = '';
    let copied = 0;
    for (let m = key.exec(text); m !== null; m = key.exec(text)) {
      if (!this.property(m[1])) continue;
      const start = m.index + m[0].length;
      const end = valueEnd(text, start);
      if (end === start || /^(?:null|"")/.test(text.slice(start, end))) continue;
      out += `${text.slice(copied, start)}"${MASK}"`;
      copied = end;
      key.lastIndex = end;
    }
    return out + text.slice(copied);
  }

  private json(text: string): string {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.malformedJson(text);
    }
    // A body too deep to walk safely is described, not stored (the service refuses it anyway).
    if (nestsDeeperThan(value, MAX_NESTING_LIMIT))
      return `<${text.length} characters of JSON nested deeper than ${MAX_NESTING_LIMIT} levels: not stored>`;
    let changed = false;
    const walk = (v: unknown): unknown => {
      if (v === null || typeof v !== 'object') return v;
      if (Array.isArray(v)) return v.map(walk);
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (this.property(k) && x !== null && x !== '') {
          out[k] = MASK;
          changed = true;
        } else out[k] = walk(x);
      }
      return out;
    };
    const redacted = walk(value);
    return changed ? JSON.stringify(redacted) : text;
  }
}

/** Where the JSON value starting at `from` ends (the text's end when it is cut first). */
function valueEnd(text: string, from: number): number {
  let depth = 0;
  for (let at = from; at < text.length; at++) {
    const c = text[at];
    if (c === '"') {
      for (at++; at < text.length && text[at] !== '"'; at++) if (text[at] === '\\') at++;
      if (depth === 0) return Math.min(text.length, at + 1);
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return at;
      if (--depth === 0) return at + 1;
    } else if (depth === 0 && (c === ',' || c === ' ' || c === '\n' || c === '\r' || c === '\t')) return at;
  }
  return text.length;
}

/** `text` cut to `max` characters, saying the whole's size (by default its own length). */
function truncate(text: string, max: number, size = `${text.length} characters`): string {
  return text.length > max ? `${text.slice(0, max)}... (${size})` : text;
}

const DEFAULT_REDACTION = new Redaction();

/**
 * Whether a header (its name in lower case) carries a credential: Authorization, Cookie and
 * any name holding token, secret, session, passw, key, auth or credential (X-Auth-Token,
 * X-Session, X-Api-Key).
 */
export function isSecretHeader(name: string): boolean {
  return isCredentialName(name);
}

/**
 * Text with the values of credential headers written inline (`[Authorization: apikey k]`,
 * `[X-Auth-Token: t]`, as in the Source and Destination headers) replaced by *****.
 */
export function redactInline(text: string): string {
  return DEFAULT_REDACTION.inline(text);
}
