import { MAX_NESTING_LIMIT, nestsDeeperThan } from '../util/nesting.js';
import { decodeLoose } from '../util/uri-decode.js';

// Secrets kept out of what the service shows or stores about a request: Error records
// (admin/error-records.ts), a webhook's shown headers, Source and Destination errors.
// One module, so a new kind of secret is taught to every place at once (docs/errors.md).

/** What a secret value is replaced by. */
const REDACTED = '*****';

/** Header names that carry credentials or sessions (docs/security.md). */
const CREDENTIAL_NAME = /token|secret|session|passw|key|auth|cookie|credential/i;

/**
 * Whether a header (its name in lower case) carries a credential, for redaction:
 * Authorization, Cookie and any name holding token, secret, session, passw, key, auth or
 * credential (X-Auth-Token, X-Session, X-Api-Key).
 */
export function isSecretHeader(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/**
 * Text with the values of credential headers written inline (`[Authorization: apikey k]`,
 * as in the Source and Destination headers) replaced by *****.
 */
export function redactInline(text: string): string {
  return text.replace(/((?:proxy-)?authorization|cookie|x-api-key)(\s*:\s*)[^\]]*/gi, `$1$2${REDACTED}`);
}

/** `<name>: <value>` joined with ` | `, credentials replaced by *****. */
export function renderHeaders(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(
      ([name, value]) =>
        `${name}: ${isSecretHeader(name) ? REDACTED : name === 'source' || name === 'destination' ? redactInline(value) : value}`,
    )
    .join(' | ');
}

const SECRET_KEY =
  /^(authorization|proxy-authorization|cookie|secret|password|passwd|api[-_]?key|token|access[-_]?token|client[-_]?secret)$/i;

/**
 * The body with the values of credential-like properties replaced by *****: at any depth
 * of a JSON body, and in a form-encoded body. Redacted before truncation, so a long body
 * cannot hide a secret past the cut.
 */
export function redactBody(text: string, contentType = ''): string {
  if (text === '') return text;
  if (/^\s*[[{]/.test(text)) return redactJson(text);
  if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
    const form = new URLSearchParams(text);
    let changed = false;
    for (const key of [...form.keys()])
      if (SECRET_KEY.test(key)) {
        form.set(key, REDACTED);
        changed = true;
      }
    return changed ? form.toString() : text;
  }
  return text;
}

/** Credential-like query parameters (`?apikey=...`) in a URI, their values replaced by *****. */
export function redactUri(uri: string): string {
  const q = uri.indexOf('?');
  if (q < 0) return uri;
  return (
    uri.slice(0, q) +
    uri.slice(q).replace(/([?&;])([^=&;]*)=([^&;]*)/g, (m, sep: string, key: string) => {
      const name = decodeLoose(key);
      return SECRET_KEY.test(name) || SECRET_QUERY.test(name) ? `${sep}${key}=${REDACTED}` : m;
    })
  );
}

const SECRET_QUERY = /^(api[-_]?key|key|token|access[-_]?token|auth|password|secret|signature|sig)$/i;

/** Values of credential-like properties in text that is not valid JSON: `"password": "x"` -> `"password": "*****"`. */
function redactMalformedJson(text: string): string {
  return text.replace(/("((?:[^"\\]|\\.)*)"\s*:\s*)("(?:[^"\\]|\\.)*"?|[^,}\]\s]+)/g, (m, head: string, key: string) =>
    SECRET_KEY.test(key) ? `${head}"${REDACTED}"` : m,
  );
}

function redactJson(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return redactMalformedJson(text);
  }
  // A body too deep to walk safely is described, not stored (the service refuses it anyway).
  if (nestsDeeperThan(value, MAX_NESTING_LIMIT))
    return `<${text.length} characters of JSON nested deeper than ${MAX_NESTING_LIMIT} levels: not stored>`;
  let changed = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (SECRET_KEY.test(k) && x !== null && x !== '') {
        out[k] = REDACTED;
        changed = true;
      } else out[k] = walk(x);
    }
    return out;
  };
  const redacted = walk(value);
  return changed ? JSON.stringify(redacted) : text;
}
