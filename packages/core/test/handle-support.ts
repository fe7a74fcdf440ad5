import type { PlainResponse, Service } from '@resourcery/core';

/** Calling `service.handle` in tests: no HTTP, the response body read as text and JSON. */

export const RAW = { accept: 'application/json;raw=true' };

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: PlainResponse['body'];
  text: string;
  /** The body parsed as JSON; undefined when empty or not JSON. */
  json: any;
}

export interface CallInit {
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  basePath?: string;
}

export async function bodyText(body: PlainResponse['body']): Promise<string> {
  if (body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  let text = '';
  for await (const chunk of body) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return text;
}

/** One request; a body gets `Content-Type: application/json` unless the headers say otherwise. */
export async function call(service: Service, method: string, uri: string, init: CallInit = {}): Promise<Reply> {
  const body = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  const typed = Object.keys(init.headers ?? {}).some((h) => h.toLowerCase() === 'content-type');
  const headers = { ...(body === undefined || typed ? {} : { 'content-type': 'application/json' }), ...init.headers };
  const res = await service.handle({ method, uri, headers, body, basePath: init.basePath });
  const text = await bodyText(res.body);
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, body: res.body, text, json };
}

/** A resource with a schema used by the method and request tests. */
export const PERSON_SCHEMA = {
  type: 'object',
  properties: {
    Id: { type: 'integer' },
    Name: { type: 'string', minLength: 1 },
    Age: { type: 'integer', minimum: 0 },
    City: { type: ['string', 'null'] },
  },
  required: ['Name', 'Age'],
  additionalProperties: false,
};

export const PEOPLE = [
  { Id: 1, Name: 'Ada', Age: 36, City: 'London' },
  { Id: 2, Name: 'Linus', Age: 12, City: 'Helsinki' },
  { Id: 3, Name: 'Grace', Age: 45, City: 'Arlington' },
  { Id: 4, Name: 'Tim', Age: 9, City: 'London' },
];

/** A counter of the turns of the event loop (setImmediate callbacks) from now until `stop()`. */
export function ticker(): { readonly turns: number; stop(): void } {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turns() {
      return turns;
    },
    stop: () => {
      running = false;
    },
  };
}

/** How many turns of the event loop pass while `work` runs. */
export async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  const t = ticker();
  try {
    await work();
    return t.turns;
  } finally {
    t.stop();
  }
}
