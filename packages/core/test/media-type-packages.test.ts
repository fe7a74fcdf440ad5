import contentType from 'content-type';
import Negotiator from 'negotiator';
import { negotiate, parseAccept, parseMediaType } from '../src/content-types/negotiation';

/**
 * Why the service parses Content-Type and Accept itself (content-types/media-type.ts and
 * negotiation.ts) rather than with content-type 1.0.5 and negotiator 1.1.0, which run on
 * Node 20: on headers the service must serve, the packages give no answer or throw. Each
 * case below runs both. If a package upgrade makes one of these pass through the package,
 * this test fails and the choice is worth making again.
 */

const JSON_TYPE = { bindings: ['application/json'], name: 'json' };
const LINES = { bindings: ['application/jsonl', 'application/x-ndjson', 'jl'], name: 'lines' };
const EXCEL = { bindings: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx'], name: 'excel' };
const OURS = [JSON_TYPE, LINES, EXCEL];
const OFFERS = OURS.flatMap((t) => t.bindings.filter((b) => b.includes('/')));

const chosen = (accept: string) => negotiate(parseAccept(accept), OURS);
const theirs = (accept: string) => new Negotiator({ headers: { accept } }).mediaType(OFFERS);

test.each([
  // The spec's own parameter: `raw=true` asks for the array without the envelope.
  ['application/json;raw=true', 'json', { raw: 'true' }],
  // Short bindings are tokens, not media types.
  ['jl', 'lines', {}],
  ['xlsx;q=0.9, jl;q=0.5', 'excel', {}],
  // `*` alone, as Java's HttpURLConnection sends it.
  ['*', 'json', {}],
])('Accept %s: the service chooses %s; negotiator chooses nothing', (accept, name, params) => {
  const choice = chosen(accept);
  expect(choice?.value.name).toBe(name);
  expect(choice?.params).toEqual(params);
  expect(theirs(accept)).toBeUndefined();
});

test('where both apply, they agree', () => {
  for (const accept of [
    'application/json',
    'application/jsonl;q=0.9, application/json;q=0.5',
    'application/json;q=0, */*',
    'APPLICATION/JSON',
  ])
    expect(chosen(accept)?.value.bindings).toContain(theirs(accept));
});

test.each([
  // A short binding as the body's type: `Content-Type: jl`.
  ['jl', 'jl'],
  // A parameter without a value is skipped, not a reason to refuse the body.
  ['application/json; charset', 'application/json'],
])('Content-Type %s: the service reads %s; content-type throws', (header, type) => {
  expect(parseMediaType(header)?.type).toBe(type);
  expect(() => contentType.parse(header)).toThrow();
});

test('a repeated parameter: the first one counts for the service, the last for content-type', () => {
  const header = 'application/json; charset=utf-8; charset=latin1';
  expect(parseMediaType(header)?.params.charset).toBe('utf-8');
  expect(contentType.parse(header).parameters.charset).toBe('latin1');
});
