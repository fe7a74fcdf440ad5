/** Helpers for content types that write results as tables (Excel, CSV). */
import type { Entity } from '../query/conditions.js';
import type { Result } from '../operations/results.js';

/** The union of the entities' property names, in first-seen order: the header row. */
export function propertyNames(entities: Iterable<Entity>): string[] {
  const names = new Set<string>();
  for (const entity of entities) for (const name of Object.keys(entity)) names.add(name);
  return [...names];
}

/** The entities a result carries: those selected (GET) or written (POST, PUT, PATCH); none for REPORT. */
export function resultEntities(result: Result): Entity[] {
  switch (result.kind) {
    case 'entities':
      return result.entities;
    case 'change':
      return result.data;
    default:
      return [];
  }
}

/** The counts of the JSON envelope as one entity: `{Count}` for REPORT, `{DataCount, InsertedCount...}` for changes. */
export function resultSummary(result: Result): Entity {
  switch (result.kind) {
    case 'count':
      return { Count: result.count };
    case 'entities':
      return result.total === undefined
        ? { DataCount: result.entities.length }
        : { DataCount: result.entities.length, TotalCount: result.total };
    case 'change': {
      const summary: Entity = { DataCount: result.data.length };
      if (result.inserted !== undefined) summary.InsertedCount = result.inserted;
      if (result.updated !== undefined) summary.UpdatedCount = result.updated;
      if (result.deleted !== undefined) summary.DeletedCount = result.deleted;
      return summary;
    }
    default:
      return {};
  }
}
