/**
 * Conditional requests (RFC 9110 section 13, docs/concurrency.md). A response that holds one entity
 * carries its stored version as a strong `ETag`; `If-Match` makes PUT, PATCH and DELETE
 * conditional (the operation compares the versions of the entities it would change, inside
 * the write, so no other write comes between: 412 PreconditionFailed); `If-None-Match` on
 * GET and HEAD answers 304 Not Modified while the client's copy is current, and on a write
 * refuses it (412) while the entity is at a named version (`*`: exists at all).
 */
import { ServiceError } from '../errors.js';
import type { Result } from '../operations/results.js';
import type { RequestContext } from './context.js';
import type { PlainResponse } from '../http/types.js';

/**
 * The `ETag` of a stored version: a strong entity tag. The tag made last is given again for
 * the same version: a version a storage keeps as one string (Stamp.text) then costs no new
 * string a response, and node:http checks the characters of a header value made by joining
 * strings on a slower path than those of one it checked before (docs/performance.md, "Small
 * GET: pairs of fresh servers").
 */
export function entityTag(version: string): string {
  if (version !== lastVersion) {
    lastVersion = version;
    lastTag = `"${version}"`;
  }
  return lastTag;
}

let lastVersion = '';
let lastTag = '""';

/** The version a result answers one entity with (GET of one entity, a write of one). */
export function versionOf(result: Result): string | undefined {
  return result.kind === 'entities' || result.kind === 'change' ? result.version : undefined;
}

// A quoted tag (maybe weak), or a bare token from a client that forgot the quotes.
const TAG = /\s*(?:(W\/)?"([^"]*)"|([^\s,"]+))\s*(?:,|$)/gy;

/**
 * The versions an If-Match or If-None-Match header names: `['*']` for `*`, else the
 * opaque values of its entity tags. If-Match compares strongly, so its weak tags (`W/"x"`)
 * never match and are left out (a list of only weak tags is then `[]`: nothing matches);
 * If-None-Match compares weakly and keeps them. A malformed list is `[]` too.
 */
export function parseEntityTags(header: string, weak: boolean): string[] {
  const text = header.trim();
  if (text === '*') return ['*'];
  const tags: string[] = [];
  TAG.lastIndex = 0;
  while (TAG.lastIndex < text.length) {
    const at = TAG.lastIndex;
    const m = TAG.exec(text);
    // A malformed list matches nothing: If-Match then refuses the write, If-None-Match answers in full.
    if (m === null || TAG.lastIndex === at) return [];
    if (m[1] === undefined || weak) tags.push(m[2] ?? m[3]);
  }
  return tags;
}

const NO_CONDITIONS = Object.freeze({});

/**
 * If-Match and If-None-Match of a write (PUT, PATCH, DELETE), for the operation to check;
 * each undefined without its header. Both compare strongly on writes.
 */
export function writeConditions(ctx: RequestContext): { ifMatch?: string[]; ifNoneMatch?: string[] } {
  if (ctx.method !== 'PUT' && ctx.method !== 'PATCH' && ctx.method !== 'DELETE') return NO_CONDITIONS;
  const ifMatch = ctx.header('if-match');
  const ifNoneMatch = ctx.header('if-none-match');
  return {
    ifMatch: ifMatch === undefined ? undefined : parseEntityTags(ifMatch, false),
    ifNoneMatch: ifNoneMatch === undefined ? undefined : parseEntityTags(ifNoneMatch, false),
  };
}

/**
 * The preconditions of a read (GET, HEAD), once its result is known: If-Match that no
 * longer matches is 412; If-None-Match that matches answers 304 with the ETag and no body.
 */
export function checkRead(ctx: RequestContext, result: Result): PlainResponse | undefined {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return undefined;
  const ifMatch = ctx.header('if-match');
  const ifNoneMatch = ctx.header('if-none-match');
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  const version = versionOf(result);
  const exists = result.kind === 'entities' && result.entities.length > 0;
  if (ifMatch !== undefined && !matches(parseEntityTags(ifMatch, false), version, exists))
    throw new ServiceError(
      'PreconditionFailed',
      version === undefined
        ? 'If-Match names a version, but the request does not answer one entity now'
        : `The entity changed since the version named by If-Match (now ${entityTag(version)})`,
    );
  if (ifNoneMatch !== undefined && matches(parseEntityTags(ifNoneMatch, true), version, exists))
    return { status: 304, headers: version === undefined ? {} : { etag: entityTag(version) }, body: null };
  return undefined;
}

function matches(tags: readonly string[], version: string | undefined, exists: boolean): boolean {
  if (tags.includes('*')) return exists;
  return version !== undefined && tags.includes(version);
}
