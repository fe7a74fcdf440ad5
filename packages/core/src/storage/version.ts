import { createHash } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { Entity, Storage } from './storage.js';

/**
 * The version of a stored entity as clients see it (an ETag's value, DESIGN 13): its
 * storage's stamp (`<row>.<version>`, unique to that state of that row), or, for a
 * storage without stamps, a digest of the entity's content.
 */
export function entityVersion(storage: Storage, entity: Entity): string {
  const stamp = storage.stamp?.(entity);
  if (stamp !== undefined) return `${stamp.row}.${stamp.version}`;
  return `~${createHash('sha256').update(JSON.stringify(entity)).digest('base64url').slice(0, 22)}`;
}

/**
 * If-Match for a write: every entity it changes must still be at one of the versions the
 * client names (`*`: any existing entity). 412 PreconditionFailed otherwise, including
 * when there is no entity to change.
 */
export function checkVersions(storage: Storage, expected: readonly string[] | undefined, entities: readonly Entity[]): void {
  if (expected === undefined) return;
  if (entities.length === 0)
    throw new ServiceError('PreconditionFailed', 'If-Match names a version, but no entity matches: it was deleted or never stored');
  if (expected.includes('*')) return;
  for (const e of entities) {
    const version = entityVersion(storage, e);
    if (!expected.includes(version))
      throw new ServiceError(
        'PreconditionFailed',
        `The entity changed since the version named by If-Match (now ${JSON.stringify(version)}); nothing was written`,
      );
  }
}

/**
 * If-None-Match for a write (RFC 9110 13.1.2): the write runs only while no entity it
 * changes is at a version the client names; `*`: only while it changes no entity at all
 * (a PUT that may only insert). 412 PreconditionFailed otherwise, nothing written.
 */
export function checkNoneMatch(storage: Storage, tags: readonly string[] | undefined, entities: readonly Entity[]): void {
  if (tags === undefined || entities.length === 0) return;
  if (tags.includes('*'))
    throw new ServiceError('PreconditionFailed', 'If-None-Match: * writes only where no entity matches, and one does; nothing was written');
  for (const e of entities) {
    const version = entityVersion(storage, e);
    if (tags.includes(version))
      throw new ServiceError(
        'PreconditionFailed',
        `If-None-Match names the current version ${JSON.stringify(version)}; nothing was written`,
      );
  }
}
