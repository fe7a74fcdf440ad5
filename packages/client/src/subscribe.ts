/**
 * Event streams (docs/client.md, "Live events"): a selector's events as they are raised,
 * read over fetch (so an API key header goes along, which a browser's EventSource cannot
 * send), reconnecting with Last-Event-ID after a network failure or a stream the server
 * ended, so nothing within the service's retention is missed.
 */

/** One event of a stream: `data` is the matching entities (a binary event: `{ ContentType, Base64 }`). */
export interface StreamEvent<D> {
  id: string;
  /** The event resource's name, e.g. `Person.Inserted`. */
  event: string;
  data: D;
}

export interface SubscribeOptions {
  /** Ends the subscription (the promise then resolves). */
  signal?: AbortSignal;
  /** Resume after this event id (one a previous subscription received). */
  lastEventId?: string;
  /** Called when the service no longer had the events after our last id (`event: reset`): read the data again. */
  onReset?: () => void;
  /** Called with each failure before a reconnect (network errors, 429, 5xx). */
  onError?: (error: unknown) => void;
  /** First wait before reconnecting, doubled up to 30 s while failures repeat (default 500 ms). */
  retryMs?: number;
}

/** What subscribe needs of the client: a request with its headers, failures (>= 400) thrown with their status. */
export type Send = (uri: string, headers: Record<string, string>, signal: AbortSignal | undefined) => Promise<Response>;

/** Statuses after which trying again cannot help: the request itself is wrong or refused. */
const FINAL = new Set([400, 401, 403, 404, 405, 406]);

export async function subscribe<D>(
  send: Send,
  selector: string,
  onEvent: (event: StreamEvent<D>) => void,
  options: SubscribeOptions = {},
): Promise<void> {
  const { signal } = options;
  let lastId = options.lastEventId;
  const first = options.retryMs ?? 500;
  let wait = first;
  while (!signal?.aborted) {
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (lastId !== undefined) headers['last-event-id'] = lastId;
      const res = await send(selector, headers, signal);
      if (res.body === null) throw new Error('The event stream has no body');
      for await (const message of messages(res.body)) {
        wait = first;
        if (message.id !== undefined) lastId = message.id;
        if (message.event === 'reset') options.onReset?.();
        else if (message.event !== undefined && message.event !== 'closed' && message.data !== undefined)
          onEvent({ id: message.id ?? '', event: message.event, data: JSON.parse(message.data) as D });
      }
    } catch (error) {
      if (signal?.aborted) return;
      const status = (error as { status?: number }).status;
      if (status !== undefined && FINAL.has(status)) throw error;
      options.onError?.(error);
    }
    if (signal?.aborted) return;
    await sleep(wait, signal);
    wait = Math.min(wait * 2, 30_000);
  }
}

interface Message {
  id?: string;
  event?: string;
  data?: string;
}

/** Server-Sent Events messages from a body, as the EventSource parser reads them (comments skipped). */
async function* messages(body: ReadableStream<Uint8Array>): AsyncGenerator<Message> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let message: Message = {};
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (message.data !== undefined || message.event !== undefined) yield message;
          message = {};
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
        else if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
