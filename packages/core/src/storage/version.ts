import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { ServiceError } from '../errors.js';
import type { Entity, Stamp, Storage } from './storage.js';

/**
 * The key of the content digests of this process (drawn at start), for storages that no
 * service gave an `etagSecret`.
 */
const PROCESS_KEY = createSecretKey(randomBytes(32));

/** The key of each storage's content digests, where a service was given `etagSecret`. */
const keys = new WeakMap<Storage, { key: KeyObject; secret: string }>();

/** Shortest `etagSecret` accepted: a shorter one could be guessed offline from a tag. */
export const MIN_ETAG_SECRET_LENGTH = 16;

/**
 * Keys the content digests of a storage without stamps with a service's `etagSecret`, so
 * that every instance given the same secret answers the same ETag for the same entity.
 * A storage shared within one process with two different secrets would answer two ETags
 * for one state: that is an error.
 */
export function useEtagSecret(storage: Storage, secret: string): void {
  const current = keys.get(storage);
  if (current?.secret === secret) return;
  if (current !== undefined)
    throw new Error('This storage already serves a service with another etagSecret: give every service over one storage the same secret');
  keys.set(storage, { key: createSecretKey(Buffer.from(secret, 'utf8')), secret });
}

/**
 * The version of a stored entity as clients see it (an ETag's value, docs/concurrency.md): its
 * storage's stamp (`<row>.<version>`, unique to that state of that row), or, for a
 * storage without stamps, an HMAC of the stored entity's content. The digest covers
 * the properties clients do not see (a toOutput hook's, a projection's), so If-Match
 * still catches a change to them; keyed, so that a client knowing the visible part
 * cannot find a hidden value by hashing guesses offline against the tag.
 */
export function entityVersion(storage: Storage, entity: Entity, stamp: Stamp | undefined = storage.stamp?.(entity)): string {
  if (stamp !== undefined) return stamp.text ?? `${stamp.row}.${stamp.version}`;
  const key = keys.get(storage)?.key ?? PROCESS_KEY;
  return `~${createHmac('sha256', key).update(JSON.stringify(entity)).digest('base64url').slice(0, 22)}`;
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
