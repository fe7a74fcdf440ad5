import { ERROR_RESOURCE } from '../admin/error-records.js';
import { toServiceError, type ServiceError } from '../errors.js';
import type { PlainResponse } from '../http/types.js';
import type { ErrorBody } from '../operations/results.js';
import type { RequestContext } from './context.js';
import type { PipelineHost } from './host.js';

/**
 * Turns any failure into the error response of docs/errors.md, storing an Error record (not for
 * 401); `recorded`: the link of a record already made for it instead.
 */
export async function errorResponse(
  host: Pick<PipelineHost, 'options' | 'errors'>,
  ctx: RequestContext,
  thrown: unknown,
  recorded?: Promise<string | undefined>,
): Promise<PlainResponse> {
  const error = toServiceError(thrown);
  const { onError } = host.options;
  if (error.status >= 500 && onError && recorded === undefined) {
    try {
      onError(error, {
        method: ctx.method,
        uri: ctx.uri,
        caller: { context: ctx.context, principal: ctx.principal, method: ctx.method },
        cause: thrown,
      });
    } catch {
      // A failing logger must not change the answer.
    }
  }
  let moreInfoAt = await recorded;
  if (recorded === undefined && error.code !== 'NotAuthorized') {
    try {
      moreInfoAt = `${ctx.basePath}/${ERROR_RESOURCE}/id=${await host.errors.record(ctx, error)}`;
    } catch {
      // A failing error store must not hide the original error.
    }
  }
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...error.headers };
  if (moreInfoAt) headers.errorinfo = moreInfoAt;
  // A page's script (the explorer) asks for no Basic challenge: browsers would answer it with a login dialog.
  if (error.code === 'NotAuthorized' && ctx.header('x-requested-with') !== undefined) delete headers['www-authenticate'];
  const body = ctx.method === 'HEAD' ? null : JSON.stringify(errorBody(error, ctx, moreInfoAt));
  return { status: error.status, headers, body };
}

/** What a client reads for an unexpected error whose record could not be stored. */
const UNRECORDED_MESSAGE = 'An unexpected error occurred; its error record could not be stored';

function errorBody(error: ServiceError, ctx: RequestContext, moreInfoAt: string | undefined): ErrorBody {
  const body: ErrorBody = {
    Status: 'fail',
    ErrorType: `Service.Results.${error.code}`,
    ErrorCode: error.code,
    // The generic message points to the record: not when none could be stored.
    Message: moreInfoAt === undefined && error.unexpected ? UNRECORDED_MESSAGE : error.publicMessage,
    TimeStamp: ctx.time.toISOString(),
    Uri: ctx.basePath + ctx.uri,
    TimeElapsedMs: ctx.elapsedMs(),
  };
  if (error.data !== undefined) body.Data = error.data;
  if (moreInfoAt !== undefined) body.MoreInfoAt = moreInfoAt;
  // Keep the documented key order: Data and MoreInfoAt come before TimeStamp.
  const { TimeStamp, Uri, TimeElapsedMs, ...head } = body;
  return { ...head, TimeStamp, Uri, TimeElapsedMs };
}
