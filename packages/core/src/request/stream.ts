// A GET of an event resource that asks for `text/event-stream`: the caller, authenticated
// once by the pipeline, subscribes with the rights and rows a GET of the event's resource
// would have (docs/events.md, "Streaming events").
import type { PlainResponse } from '../http/types.js';
import type { Caller } from '../model/caller.js';
import { eventSource } from '../webhooks/webhook.js';
import { compileSelector } from '../webhooks/selector.js';
import type { RequestContext } from './context.js';
import type { PipelineHost } from './host.js';

/** Whether the request asks for an event stream (`Accept: text/event-stream`, not refused with q=0). */
export function wantsEventStream(accept: string | undefined): boolean {
  if (accept === undefined || !accept.includes('event-stream')) return false;
  return accept.split(',').some((item) => {
    const [type, ...params] = item.split(';');
    if (type.trim().toLowerCase() !== 'text/event-stream') return false;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Compression and proxy buffering would hold messages back: `no-transform` turns the
 * `compression` middleware (and proxies that honour it) off, `X-Accel-Buffering` nginx's buffer.
 */
const HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/** The stream's response; 400 for a selector that is not one, 403 without GET on the event's resource, 429 past the limits. */
export function openStream(service: PipelineHost, ctx: RequestContext, caller: Caller): PlainResponse {
  const selector = compileSelector(service, ctx.uri);
  const source = eventSource(service, selector.event);
  service.authorize(caller, source, 'GET');
  const resource = service.resources.find(source);
  const rule = resource !== undefined && resource.kind === 'EntityResource' ? resource.rows(caller, 'GET') : null;
  const body = service.streams.open({
    selector,
    rows: rule === null ? null : rule.test,
    principal: caller.principal,
    lastEventId: ctx.header('last-event-id'),
  });
  return { status: 200, headers: { ...HEADERS }, body };
}
