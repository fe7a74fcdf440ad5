import { createHash, timingSafeEqual } from 'node:crypto';
import { ServiceError } from './errors.js';

/** Which resources (glob patterns, `*` wildcard, case-insensitive) and methods a key may use. */
export interface ApiKeyRule {
  resources?: string[];
  methods?: string[];
}

export interface ApiKeyConfig {
  key: string;
  /** Omitted: every method on every resource. */
  allow?: ApiKeyRule[];
}

interface CompiledRule {
  resources: RegExp | null;
  methods: Set<string> | null;
}

export interface Principal {
  rules: CompiledRule[] | null;
}

const OPEN: Principal = { rules: null };
const ALWAYS_OPEN = 'service.availableresource';

/**
 * API keys (DESIGN 6): `Authorization: apikey KEY`, or Basic with a blank user name and
 * the key as password. Keys are kept as SHA-256 digests and compared in constant time.
 */
export class Auth {
  private readonly keys: Array<{ digest: Buffer; principal: Principal }>;

  constructor(keys: ApiKeyConfig[] = []) {
    this.keys = keys.map((k) => {
      if (typeof k.key !== 'string' || k.key === '') throw new Error('An API key must be a non-empty string');
      return { digest: digest(k.key), principal: { rules: k.allow ? k.allow.map(compileRule) : null } };
    });
  }

  get enabled(): boolean {
    return this.keys.length > 0;
  }

  /** The key's holder, or 401 when keys are required and none valid was sent. */
  authenticate(authorization: string | undefined): Principal {
    if (!this.enabled) return OPEN;
    const key = authorization === undefined ? undefined : keyOf(authorization);
    if (key === undefined) throw unauthorized('This service requires an API key: send Authorization: apikey <key>');
    const presented = digest(key);
    let found: Principal | undefined;
    for (const k of this.keys) if (timingSafeEqual(k.digest, presented) && found === undefined) found = k.principal;
    if (found === undefined) throw unauthorized('The API key is not valid');
    return found;
  }

  /** 403 when the key may not use this method on this resource. */
  authorize(principal: Principal, resource: string, method: string): void {
    if (principal.rules === null || resource.toLowerCase() === ALWAYS_OPEN) return;
    const m = method === 'REPORT' || method === 'HEAD' ? 'GET' : method;
    const ok = principal.rules.some((r) => (r.resources === null || r.resources.test(resource)) && (r.methods === null || r.methods.has(m) || r.methods.has(method)));
    if (!ok) throw new ServiceError('Forbidden', `This API key may not use ${method} on '${resource}'`);
  }

  /**
   * Text with the values of credential headers written inline (`[Authorization: apikey k]`,
   * as in the Source and Destination headers) replaced by *****.
   */
  static redactInline(text: string): string {
    return text.replace(/((?:proxy-)?authorization|cookie|x-api-key)(\s*:\s*)[^\]]*/gi, '$1$2*****');
  }

  /** Whether a header value carries a credential (for redaction). */
  static isSecretHeader(name: string): boolean {
    return name === 'authorization' || name === 'cookie' || name === 'proxy-authorization' || name === 'x-api-key';
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

function unauthorized(message: string): ServiceError {
  return new ServiceError('NotAuthorized', message, { headers: { 'www-authenticate': 'Basic realm="Service"' } });
}
