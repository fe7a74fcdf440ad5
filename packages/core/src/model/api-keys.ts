import { createHash, timingSafeEqual } from 'node:crypto';
import { unauthorized, type Authenticate } from './caller.js';
import { ServiceError } from '../errors.js';

/** Which resources (glob patterns, `*` wildcard, case-insensitive) and methods a key may use. */
export interface ApiKeyRule {
  resources?: string[];
  methods?: string[];
}

export interface ApiKeyConfig {
  key: string;
  /** Names the key's holder in Error records (`Principal`); default `key1`, `key2`... by position. */
  name?: string;
  /** Omitted: every method on every resource. */
  allow?: ApiKeyRule[];
}

interface CompiledRule {
  resources: RegExp | null;
  methods: Set<string> | null;
}

/** The holder of an API key: which resources and methods it may use (never the key itself). */
export class ApiKeyPrincipal {
  constructor(
    readonly rules: CompiledRule[] | null,
    /** The key's name (ApiKeyConfig.name), never the key. */
    readonly name: string = 'key',
  ) {}
}

/**
 * The built-in authenticator (docs/api-keys.md): `Authorization: apikey KEY`, or Basic with a blank
 * user name and the key as password; the principal is an ApiKeyPrincipal.
 */
export function apiKeys(keys: ApiKeyConfig[]): Authenticate<unknown, ApiKeyPrincipal> {
  const auth = new ApiKeys(keys);
  return (request) => auth.authenticate(request.headers.authorization);
}
const ALWAYS_OPEN = 'service.availableresource';

/**
 * API keys (docs/api-keys.md): `Authorization: apikey KEY`, or Basic with a blank user name and
 * the key as password. Keys are kept as SHA-256 digests and compared in constant time.
 */
export class ApiKeys {
  private readonly keys: Array<{ digest: Buffer; principal: ApiKeyPrincipal }>;

  constructor(keys: ApiKeyConfig[]) {
    this.keys = keys.map((k, i) => {
      if (typeof k.key !== 'string' || k.key === '') throw new Error('An API key must be a non-empty string');
      const name = k.name ?? `key${i + 1}`;
      return { digest: digest(k.key), principal: new ApiKeyPrincipal(k.allow ? k.allow.map(compileRule) : null, name) };
    });
  }

  /** The key's holder, or 401 when no valid key was sent. */
  authenticate(authorization: string | undefined): ApiKeyPrincipal {
    const key = authorization === undefined ? undefined : keyOf(authorization);
    if (key === undefined) throw unauthorized('This service requires an API key: send Authorization: apikey <key>');
    const presented = digest(key);
    let found: ApiKeyPrincipal | undefined;
    for (const k of this.keys) if (timingSafeEqual(k.digest, presented) && found === undefined) found = k.principal;
    if (found === undefined) throw unauthorized('The API key is not valid');
    return found;
  }

  /** Whether an API key's holder may use this method on this resource; other principals may. */
  static allows(principal: unknown, resource: string, method: string): boolean {
    if (!(principal instanceof ApiKeyPrincipal) || principal.rules === null || resource.toLowerCase() === ALWAYS_OPEN) return true;
    const m = method === 'REPORT' || method === 'HEAD' ? 'GET' : method;
    return principal.rules.some(
      (r) => (r.resources === null || r.resources.test(resource)) && (r.methods === null || r.methods.has(m) || r.methods.has(method)),
    );
  }

  /** 403 when an API key's holder may not use this method on this resource; other principals pass. */
  static authorize(principal: unknown, resource: string, method: string): void {
    if (!ApiKeys.allows(principal, resource, method))
      throw new ServiceError('Forbidden', `This API key may not use ${method} on '${resource}'`);
  }
}

function keyOf(authorization: string): string | undefined {
  const space = authorization.indexOf(' ');
  if (space < 0) return undefined;
  const scheme = authorization.slice(0, space).toLowerCase();
  const value = authorization.slice(space + 1).trim();
  if (scheme === 'apikey') return value || undefined;
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    if (decoded.slice(0, colon) !== '') throw unauthorized('Basic credentials must have a blank user name and the API key as password');
    return decoded.slice(colon + 1) || undefined;
  }
  return undefined;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function compileRule(rule: ApiKeyRule): CompiledRule {
  const resources = rule.resources?.length
    ? new RegExp(`^(?:${rule.resources.map((p) => p.split('*').map(escape).join('.*')).join('|')})$`, 'i')
    : null;
  const methods = rule.methods?.length ? new Set(rule.methods.map((m) => m.toUpperCase())) : null;
  return { resources, methods };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
