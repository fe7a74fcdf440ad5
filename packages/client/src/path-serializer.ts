/**
 * A path serializer for clients generated from the OpenAPI document, e.g. openapi-fetch's
 * `createClient<paths>({ baseUrl, pathSerializer })` (docs/client.md, "Generated clients").
 * Generators percent-encode every path parameter, so `/Order/{conditions}/{metaConditions}`
 * with `CustomerId=1&Total>5` went out as `/Order/CustomerId%3D1%26Total%3E5` (400): the
 * operators and `&` were data. Here `conditions` and `metaConditions` go into the path as
 * they are (build them with encodeCondition, or encode values with encodeValue), missing
 * ones as `_`; any other parameter is one key value, encoded as encodeKey does.
 */
import { encodeKey } from './uri.js';

const PARAMETER = /\{([^{}]+)\}/g;
const WRITTEN_AS_IS = new Set(['conditions', 'metaConditions']);

export function pathSerializer(pathname: string, pathParams: Record<string, unknown>): string {
  return pathname.replace(PARAMETER, (_match, name: string) => {
    const value = pathParams?.[name];
    if (WRITTEN_AS_IS.has(name)) {
      if (value === undefined || value === null || value === '') return '_';
      if (typeof value !== 'string') throw new TypeError(`'${name}' is the text of a URI part, e.g. 'Age>30&Name!=null'`);
      if (value.includes('/') || value.includes('?') || value.includes('#'))
        throw new TypeError(`'${name}' holds '/', '?' or '#' outside a value: percent-encode values (encodeValue)`);
      return value;
    }
    if (typeof value !== 'string' && typeof value !== 'number') throw new TypeError(`The key parameter '${name}' needs a value`);
    return encodeKey(value);
  });
}
