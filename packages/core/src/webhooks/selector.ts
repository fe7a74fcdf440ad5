import { ServiceError } from '../errors.js';
import { parseUri } from '../grammar/parse.js';
import type { RaisedEvent } from './events.js';
import { compileConditions, type Entity, type Predicate } from '../query/conditions.js';
import { typeConditions, type JsonSchema } from '../query/schema-types.js';
import type { Events } from './events.js';
import type { ResourceRegistry } from '../model/resources.js';

/** A compiled event selector `/<Event>[/<conditions>]` (docs/webhooks.md). */
export interface EventSelector {
  /** The event's full name, as declared. */
  event: string;
  /** The selector with the event's full name: `/person.inserted/Age>5` -> `/Person.Inserted/Age>5`. */
  text: string;
  /** Conditions over payload entities; null selects every event of that name. */
  predicate: Predicate | null;
}

function invalid(selector: string, reason: string): never {
  throw new ServiceError(
    'InvalidEventSelector',
    `Invalid event selector '${selector}': ${reason}. The shape is /<EventResource>[/<conditions>], e.g. /Person.Inserted/Age>50`,
    { data: { EventSelector: reason } },
  );
}

/** What a selector is checked against: the declared resources and events. */
export interface SelectorCatalog {
  readonly resources: ResourceRegistry;
  readonly events: Events;
}

/** Compiles a selector; 400 InvalidEventSelector when it is not one (checked on save). */
export function compileSelector(catalog: SelectorCatalog, text: string): EventSelector {
  if (typeof text !== 'string' || text.trim() === '') invalid(String(text), 'it is empty');
  const selector = text.trim();
  const path = selector.startsWith('/') ? selector : `/${selector}`;
  let parsed;
  try {
    parsed = parseUri(path);
  } catch (e) {
    return invalid(selector, (e as Error).message);
  }
  if (parsed.error) invalid(selector, parsed.error.message);
  if (parsed.macro) invalid(selector, 'a macro cannot be selected');
  if (parsed.view !== null) invalid(selector, 'events have no views');
  if (parsed.meta.length > 0) invalid(selector, 'meta-conditions are not allowed in a selector');
  if (parsed.resource === '') invalid(selector, 'it names no event');
  let name: string;
  try {
    const resource = catalog.resources.resolve(parsed.resource);
    if (resource.kind !== 'EventResource') invalid(selector, `'${resource.name}' is not an event resource`);
    name = resource.name;
  } catch (e) {
    if (ServiceError.is(e) && e.code === 'InvalidEventSelector') throw e;
    return invalid(selector, (e as Error).message);
  }
  const definition = catalog.events.get(name)!;
  if (definition.contentType !== undefined && parsed.conditions.length > 0)
    invalid(selector, `'${name}' is a binary event: it has no entities to filter`);
  try {
    const conditions = typeConditions(parsed.conditions, definition.schema as JsonSchema | undefined);
    const slash = path.indexOf('/', 1);
    return {
      event: definition.name,
      text: `/${definition.name}${slash < 0 ? '' : path.slice(slash)}`,
      predicate: compileConditions(conditions),
    };
  } catch (e) {
    return invalid(selector, (e as Error).message);
  }
}

/**
 * The part of an event a selector takes: the matching entities of an entity payload
 * (null when none match), or the whole binary payload.
 */
export function select(selector: EventSelector, event: Pick<RaisedEvent, 'name' | 'entities' | 'binary'>): Entity[] | 'binary' | null {
  if (selector.event !== event.name) return null;
  if (event.binary) return 'binary';
  const entities = event.entities ?? [];
  const matching = selector.predicate === null ? entities : entities.filter(selector.predicate);
  return matching.length > 0 ? matching : null;
}
