import { ServiceError } from '../errors.js';
import type { PlainRequest, PlainResponse } from '../http/types.js';
import type { LocalRequests } from '../outgoing/local-requests.js';
import { Origin } from '../outgoing/origin.js';
import { RequestContext } from './context.js';
import { errorResponse } from './error-response.js';
import { MAX_DEPTH, type PipelineHost } from './host.js';
import { handle } from './pipeline.js';

/**
 * Local requests through this pipeline, one level deeper each: on the caller's behalf
 * (Source, Destination) with the caller's context; webhook deliveries pass none. Each
 * counts against its origin's bound: past it, the answer is 508 (see `refuse`).
 */
export function localRequests(host: PipelineHost): LocalRequests {
  const local: LocalRequests = {
    maxCaused: host.options.maxCausedRequests,
    handle(request, depth, context, origin = new Origin()) {
      if (depth > MAX_DEPTH)
        return Promise.reject(new ServiceError('InfiniteLoopDetected', `Local requests nested more than ${MAX_DEPTH} deep`));
      if (!origin.take(host.options.maxCausedRequests)) return refuse(host, request, origin, depth, context);
      return handle(host, request, depth, context, origin);
    },
    refuse: (request, origin, depth, error) => refuse(host, request, origin, depth, undefined, error),
  };
  return local;
}

/**
 * The answer to a request one origin caused past `maxCausedRequests` (or, given, past
 * another loop limit): 508 InfiniteLoopDetected. Only the first refusal of an origin makes
 * an Error record (and tells onError); later ones link to it, so a runaway loop cannot
 * flush the records.
 */
async function refuse(
  host: PipelineHost,
  request: PlainRequest,
  origin: Origin,
  depth: number,
  context?: unknown,
  error = new ServiceError(
    'InfiniteLoopDetected',
    `One client request caused more than ${host.options.maxCausedRequests} local requests and webhook deliveries (${origin.id}): the rest are stopped (service option maxCausedRequests)`,
  ),
): Promise<PlainResponse> {
  const ctx = new RequestContext(request, host.options.maxBodyBytes, depth, context, origin);
  if (origin.refusal !== undefined) return errorResponse(host, ctx, error, origin.refusal);
  let link!: (value: string | undefined) => void;
  origin.refusal = new Promise((resolve) => (link = resolve));
  const response = await errorResponse(host, ctx, error);
  link(response.headers.errorinfo);
  return response;
}
