import { ServiceError } from '@resourcery/core';

/** PostgreSQL refuses NUL characters and unpaired surrogates in jsonb: a client's data problem. */
const UNSTORABLE = new Set(['22P05', '22P02', '22021']);

/**
 * A database error caused by the entities written, as the client's error: constraints
 * the table's owner added (unique indexes, CHECK, NOT NULL, foreign keys) say what the
 * data broke, in words, without the constraint's name; anything else stays a 500.
 */
export function refusal(e: unknown): unknown {
  const code = (e as { code?: string }).code ?? '';
  const detail = (e as { column?: string }).column ? ` (property '${(e as { column?: string }).column}')` : '';
  if (UNSTORABLE.has(code)) {
    return new ServiceError(
      'InvalidResourceEntity',
      `The SQL storage cannot store this entity: ${(e as Error).message} (NUL characters and unpaired surrogates cannot be stored)`,
    );
  }
  if (code === '23505' || code === '23P01')
    return new ServiceError('Conflict', 'An entity with the same unique value is already stored; nothing was written');
  if (code === '23503')
    return new ServiceError(
      'Conflict',
      'The entity refers to, or is referred to by, data that does not allow this change; nothing was written',
    );
  if (code.startsWith('23'))
    return new ServiceError('InvalidResourceEntity', `The entity breaks a rule of the database table${detail}; nothing was written`);
  if (code.startsWith('22'))
    return new ServiceError('InvalidResourceEntity', `A value of the entity does not fit the database table${detail}; nothing was written`);
  return e;
}
