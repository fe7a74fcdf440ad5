/**
 * What `Service.AvailableResource` and the OpenAPI document show a caller: the resources it
 * may use, each with the methods it may use (docs/security.md#what-a-caller-is-shown). An
 * open service shows everything; a caller with an API key or the app's rules sees its part.
 */
import type { Caller } from '../model/caller.js';
import type { Method } from '../http/types.js';
import type { Resource, ResourceDefinition, ResourceRegistry } from '../model/resources.js';
import type { Entity } from '../query/conditions.js';
import { ComputedStorage } from '../storage/computed.js';
import { eventSource } from '../webhooks/webhook.js';

export interface ListingHost {
  readonly resources: ResourceRegistry;
  /** Whether the caller may use the method on the resource (an API key's allow list, the resource's rules). */
  may(caller: Caller, resource: string, method: string): boolean;
}

/**
 * The methods of a resource the caller may use; null when it is not shown to the caller. An
 * event resource is shown to callers that may read what it carries (GET on the entity
 * resource whose changes it reports, or on the event itself), as a stream or webhook of it needs.
 */
function methodsFor(host: ListingHost, caller: Caller, r: Resource): readonly Method[] | null {
  if (r.kind === 'EventResource') return host.may(caller, eventSource(host, r.name), 'GET') ? r.methods : null;
  const allowed = r.methods.filter((m) => host.may(caller, r.name, m));
  return allowed.length > 0 ? allowed : null;
}

/** The resources as the caller may use them: others left out, methods narrowed. */
export function resourcesFor(host: ListingHost, caller: Caller): Resource[] {
  const seen: Resource[] = [];
  for (const r of host.resources.all()) {
    const methods = methodsFor(host, caller, r);
    if (methods === null) continue;
    // The same resource with the caller's methods (Resource keeps no #private state).
    seen.push(methods.length === r.methods.length ? r : (Object.create(r, { methods: { value: methods } }) as Resource));
  }
  return seen;
}

/** The definition of `Service.AvailableResource`: one entity per resource the caller is shown. */
export function listingDefinition(host: ListingHost, name: string): ResourceDefinition<Entity> {
  const entities = () =>
    host.resources.all().map((r) => ({
      Name: r.name,
      Description: r.description,
      Methods: [...r.methods],
      Kind: r.kind,
      Views: r.views.map((v) => ({ Name: v.name, Description: v.description })),
      ...(r.binary ? { ContentType: r.binary.contentType } : {}),
    }));
  // The row rule and the hook of one request get the same caller: worked out once for both.
  const seen = new WeakMap<Caller, Map<string, readonly Method[]>>();
  const shown = (caller: Caller) => {
    let names = seen.get(caller);
    if (names === undefined) seen.set(caller, (names = new Map(resourcesFor(host, caller).map((r) => [r.name, r.methods]))));
    return names;
  };
  return {
    name,
    description: 'The resources of this service',
    methods: ['GET', 'REPORT', 'HEAD'],
    storage: new ComputedStorage(entities),
    events: false,
    // Rows: what a REPORT counts and a GET selects; the hook narrows each row's Methods.
    rules: {
      rows: (caller) => {
        const names = shown(caller);
        return (e) => names.has(e.Name as string);
      },
    },
    hooks: {
      afterRead: (rows, caller) => {
        const names = shown(caller);
        return rows.map((e) =>
          names.has(e.Name as string) && Array.isArray(e.Methods) ? { ...e, Methods: [...names.get(e.Name as string)!] } : e,
        );
      },
    },
  };
}
