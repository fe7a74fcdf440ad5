/**
 * A query string is never read (docs/uri.md): `/posts?author=me` would otherwise answer
 * every post. The 400 shows the path form of the same query, translating the forms
 * json-server users write (0.17: `views_gte=10`, `_sort`/`_order`, `_page`/`_limit`,
 * `q`; 1.x: `views:gte=10`, `_sort=-views`, `_per_page`).
 */

const OPERATORS: Record<string, string> = { gte: '>=', lte: '<=', gt: '>', lt: '<', ne: '!=' };

/** The URI with its query string moved into the path, e.g. `/posts/author=me&views>=10/order_desc=views&limit=10`. */
export function pathFormOf(path: string, query: string): string {
  const [, resource = '', conditionsPart = '', metaPart = ''] = path.split('/');
  const conditions = conditionsPart === '' || conditionsPart === '_' ? [] : [conditionsPart];
  const meta = metaPart === '' || metaPart === '_' ? [] : [metaPart];
  const params = new Map<string, string>();
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const key = at < 0 ? pair : pair.slice(0, at);
    const value = at < 0 ? '' : pair.slice(at + 1);
    params.set(key, value);
    const op = /^(.+?)(?:_|:)(gte|lte|gt|lt|ne)$/.exec(key);
    const like = /^(.+?)(?:_like|:contains)$/.exec(key);
    if (op) conditions.push(`${op[1]}${OPERATORS[op[2]]}${value}`);
    else if (like) meta.push(`search_regex=${value},${like[1]}`);
    else if (key === 'q') meta.push(`search=${value}`);
    else if (!key.startsWith('_')) conditions.push(`${key}=${value}`);
  }
  const sort = params.get('_sort');
  if (sort) {
    const field = sort.split(',')[0];
    const descending = field.startsWith('-') || params.get('_order')?.split(',')[0].toLowerCase() === 'desc';
    meta.push(`order_${descending ? 'desc' : 'asc'}=${field.replace(/^-/, '')}`);
  }
  const limit = params.get('_limit') ?? params.get('_per_page');
  const page = Number(params.get('_page'));
  const start = params.get('_start');
  const end = params.get('_end');
  if (start !== undefined) meta.push(`offset=${start}`);
  else if (page > 1) meta.push(`offset=${(page - 1) * Number(limit ?? 10)}`);
  if (start !== undefined && end !== undefined) meta.push(`limit=${Number(end) - Number(start)}`);
  else if (limit !== undefined) meta.push(`limit=${limit}`);
  else if (params.has('_page')) meta.push('limit=10');
  const parts = [`/${resource}`];
  if (conditions.length > 0 || meta.length > 0) parts.push(conditions.length > 0 ? conditions.join('&') : '_');
  if (meta.length > 0) parts.push(meta.join('&'));
  return parts.join('/');
}
