import { ApiKeyPrincipal } from '../model/api-keys.js';
import type { ResourceRules } from '../model/rules.js';
import { LOG_RESOURCE } from '../webhooks/log.js';
import { WEBHOOK_RESOURCE } from '../webhooks/webhook.js';
import { ERROR_RESOURCE } from './error-records.js';
import { MACRO_RESOURCE } from './macros.js';

/**
 * Who may use the built-in admin resources (docs/security.md). An app that authenticates
 * its callers itself (`authenticate`) closes them by default: they hold other callers'
 * requests (Error records) and requests that run for whoever calls them (macros,
 * webhooks). Rules declared here open them, with the same `allow`/`rows` model as an
 * app's own resources. API keys name the admin resources they may use, as before.
 */
export interface AdminOptions {
  /** Rules for every guarded admin resource (Error, Macro, Webhook, WebhookLog). */
  rules?: ResourceRules;
  /** Rules for one admin resource by its full name (`Service.Admin.Error`); they replace `rules` for it. */
  resources?: Partial<Record<GuardedAdminResource, ResourceRules>>;
  /**
   * The name an Error record keeps of its caller (its `Principal`), for row rules such as
   * `Principal=ann`. Default: a string or number principal as text, else its `id` or
   * `name` when that is a string or number, an API key's name; else null.
   */
  principalName?: (principal: unknown) => string | null | undefined;
}

/** The admin resources that hold other callers' data or run stored requests. */
const GUARDED_ADMIN = [ERROR_RESOURCE, MACRO_RESOURCE, WEBHOOK_RESOURCE, LOG_RESOURCE] as const;
type GuardedAdminResource = (typeof GUARDED_ADMIN)[number];

/** Closed: only an API key's holder passes (its own allow list decides, model/api-keys.ts). */
const CLOSED: ResourceRules = { allow: (caller) => caller.principal instanceof ApiKeyPrincipal };

/** Throws (at start) on rules for a resource that is not a guarded admin resource. */
export function checkAdminOptions(options: AdminOptions | undefined): void {
  for (const name of Object.keys(options?.resources ?? {}))
    if (!(GUARDED_ADMIN as readonly string[]).includes(name))
      throw new Error(`admin.resources names '${name}', which is not one of ${GUARDED_ADMIN.join(', ')}`);
}

/**
 * The rules of one built-in resource: those the app declared, else closed when the app
 * authenticates its callers itself (`closed`), else none (open, or API keys decide).
 */
export function adminRules(name: string, options: AdminOptions | undefined, closed: boolean): ResourceRules | undefined {
  if (!(GUARDED_ADMIN as readonly string[]).includes(name)) return undefined;
  const declared = options?.resources?.[name as GuardedAdminResource] ?? options?.rules;
  return declared ?? (closed ? CLOSED : undefined);
}

/** The default `principalName`. */
export function defaultPrincipalName(principal: unknown): string | null {
  if (typeof principal === 'string' || typeof principal === 'number') return String(principal);
  if (principal instanceof ApiKeyPrincipal) return principal.name;
  if (principal !== null && typeof principal === 'object') {
    for (const key of ['id', 'name'] as const) {
      const value = (principal as Record<string, unknown>)[key];
      if (typeof value === 'string' || typeof value === 'number') return String(value);
    }
  }
  return null;
}
