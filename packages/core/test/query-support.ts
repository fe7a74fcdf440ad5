import { ServiceError, type Entity } from '@resourcery/core';
import { compileQuery, evaluate, parseUri, toMetaConditions, type CompiledQuery } from '@resourcery/core/storage';

/** Compiles `<conditions>/<meta-conditions>` as a request URI would carry them. */
export function compile(conditions = '_', meta = '_'): CompiledQuery {
  const parsed = parseUri(`/R/${conditions}/${meta}`);
  if (parsed.error) throw parsed.error;
  return compileQuery(parsed.conditions, toMetaConditions(parsed.meta));
}

/** The entities a GET of `/R/<conditions>/<meta>` returns over `data` (in storage order). */
export function run(data: Entity[], conditions = '_', meta = '_'): Entity[] {
  return evaluate(data, compile(conditions, meta));
}

/** The `Id`s of the entities a query returns. */
export function ids(data: Entity[], conditions = '_', meta = '_'): unknown[] {
  return run(data, conditions, meta).map((e) => e.Id);
}

/** The ServiceError `fn` throws; fails the test when it throws nothing or something else. */
export function caught(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (e) {
    if (ServiceError.is(e)) return e;
    throw e;
  }
  throw new Error('expected a ServiceError, but nothing was thrown');
}
