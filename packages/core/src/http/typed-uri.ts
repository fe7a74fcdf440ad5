/**
 * Chromium-based browsers send every `|` of a URL's path as `%7C`, which the URI language
 * reads as a literal `|` inside a value, so no page there could ask for alternatives (OR).
 * A page may send the URI as it was written in this header (the explorer and the client
 * do): docs/uri.md#browsers.
 */
export const TYPED_URI_HEADER = 'x-resourcery-uri';

/**
 * The URI to serve: `typed` (the header) when the request's URI is exactly `typed` with
 * each `|` sent as `%7C`, else the request's URI as it came. So the header can only say
 * which `%7C` were a written `|`: it never names another resource, condition or value than
 * the path, and rights and row rules apply to the same request either way. A `%7C` written
 * as such in the header stays a literal `|` inside a value.
 */
export function typedUri(uri: string, typed: string | undefined): string {
  if (typed === undefined || typed.length >= uri.length || typed.indexOf('|') < 0) return uri;
  return typed.split('|').join('%7C') === uri ? typed : uri;
}
