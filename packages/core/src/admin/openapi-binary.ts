// The OpenAPI description of a binary resource (docs/binary-resources.md): GET and HEAD of
// its bytes, with the URI's conditions handed to the app's reader.
import type { Resource } from '../model/resources.js';

type Json = Record<string, unknown>;

/** The paths of one binary resource: `/<name>` and `/<name>/{conditions}`. */
export function binaryPaths(r: Resource): Json {
  const contentType = r.binary!.contentType;
  const id = r.name.replace(/[^A-Za-z0-9_]/g, '_');
  const item = (suffix: string, params: boolean): Json => {
    const operation = (method: 'GET' | 'HEAD'): Json => ({
      tags: [r.name],
      summary: method === 'GET' ? `The bytes of ${r.name} (${contentType})` : `The headers a GET of ${r.name} would have`,
      description:
        'A binary resource: the conditions are handed to the application, which makes the bytes. `Accept` is ignored: the answer is always its own content type.',
      operationId: `${method.toLowerCase()}_${id}${suffix}`,
      parameters: [{ $ref: '#/components/parameters/IfNoneMatch' }, { $ref: '#/components/parameters/IfMatch' }],
      responses: {
        200: {
          description: 'The bytes',
          headers: { ETag: { $ref: '#/components/headers/ETag' } },
          ...(method === 'GET'
            ? { content: { [mediaType(contentType)]: { schema: { type: 'string', contentMediaType: mediaType(contentType) } } } }
            : {}),
        },
        204: { $ref: '#/components/responses/NoContent' },
        304: { $ref: '#/components/responses/NotModified' },
        412: { $ref: '#/components/responses/PreconditionFailed' },
        default: { $ref: '#/components/responses/Error' },
      },
    });
    const path: Json = { summary: r.description || r.name, get: operation('GET'), head: operation('HEAD') };
    if (params)
      path.parameters = [
        {
          name: 'conditions',
          in: 'path',
          required: true,
          description: 'Conditions joined by `&` (`Month=2026-11`), handed to the application that makes the bytes; `_` for none',
          schema: { type: 'string', default: '_' },
        },
      ];
    return path;
  };
  return { [`/${r.name}`]: item('', false), [`/${r.name}/{conditions}`]: item('_query', true) };
}

/** The media type without its parameters (`text/csv; charset=utf-8` -> `text/csv`). */
function mediaType(contentType: string): string {
  return contentType.split(';')[0].trim();
}
