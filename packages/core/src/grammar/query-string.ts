/**
 * A query string is never read (docs/uri.md): `/posts?author=me` would otherwise answer
 * every post. The 400 shows the path form of the same query, translating the forms
 * json-server users write (0.17: `views_gte=10`, `_sort`/`_order`, `_page`/`_limit`,
 * `q`, `id=1&id=2`, `_embed`/`_expand`; 1.x: `views:gte=10`, `id:in=1,2`, `_sort=-views,title`,
 * `_per_page`, `_embed`).
 */

const OPERATORS: Record<string, string> = { gte: '>=', lte: '<=', gt: '>', lt: '<', ne: '!=' };

/** The URI with its query string moved into the path, e.g. `/posts/author=me&views>=10/order_desc=views&limit=10`. */
export function pathFormOf(path: string, query: string): string {
  const [, resource = '', conditionsPart = '', metaPart = ''] = path.split('/');
  const conditions: Array<string | (() => string)> = conditionsPart === '' || conditionsPart === '_' ? [] : [conditionsPart];
  const meta = metaPart === '' || metaPart === '_' ? [] : [metaPart];
  const params = new Map<string, string>();
  // `_embed=comments&_expand=post` (0.17), `_embed=` of 1.x for either: one embed list (docs/relations.md).
  const embedded: string[] = [];
  // json-server reads a repeated name as any of its values (`id=1&id=2`): one item with alternatives.
  const equal = new Map<string, string[]>();
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const key = at < 0 ? pair : pair.slice(0, at);
    const value = at < 0 ? '' : pair.slice(at + 1);
    params.set(key, value);
    const op = /^(.+?)(?:_|:)(gte|lte|gt|lt|ne)$/.exec(key);
    const like = /^(.+?)(?:_like|:contains)$/.exec(key);
    const among = /^(.+?):in$/.exec(key);
    if (op) conditions.push(`${op[1]}${OPERATORS[op[2]]}${value}`);
    else if (like) meta.push(`search_regex=${value},${like[1]}`);
    else if (among) conditions.push(`${among[1]}=${value.split(',').join('|')}`);
    else if (key === 'q') meta.push(`search=${value}`);
    else if (key === '_embed' || key === '_expand') embedded.push(...value.split(',').filter((v) => v !== ''));
    else if (!key.startsWith('_')) {
      const values = equal.get(key);
      if (values === undefined) {
        const listed = [value];
        equal.set(key, listed);
        conditions.push(() => `${key}=${listed.join('|')}`);
      } else values.push(value);
    }
  }
  if (embedded.length > 0) meta.push(`embed=${[...new Set(embedded)].join(',')}`);
  const sort = params.get('_sort');
  if (sort) meta.push(...orderOf(sort, params.get('_order')));
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
  const written = conditions.map((c) => (typeof c === 'string' ? c : c()));
  if (written.length > 0 || meta.length > 0) parts.push(written.length > 0 ? written.join('&') : '_');
  if (meta.length > 0) parts.push(meta.join('&'));
  return parts.join('/');
}

/**
 * `_sort=a,b&_order=desc,asc` (0.17) or `_sort=-a,b` (1.x) as order_desc=a&order_asc=b:
 * each direction is one list in the path, the first written primary, so the keys are
 * kept up to the first that would need a third list.
 */
function orderOf(sort: string, order: string | undefined): string[] {
  const directions = order?.split(',').map((d) => d.toLowerCase()) ?? [];
  const runs: Array<{ descending: boolean; fields: string[] }> = [];
  for (const [i, field] of sort.split(',').entries()) {
    if (field === '' || field === '-') continue;
    const descending = field.startsWith('-') || directions[i] === 'desc';
    const last = runs[runs.length - 1];
    if (last?.descending === descending) last.fields.push(field.replace(/^-/, ''));
    else if (runs.length === 2) break;
    else runs.push({ descending, fields: [field.replace(/^-/, '')] });
  }
  return runs.map((r) => `order_${r.descending ? 'desc' : 'asc'}=${r.fields.join(',')}`);
}
