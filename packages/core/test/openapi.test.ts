import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { createService, ERROR_CODES, type Service } from '@resourcery/core';
import { META_KEYS } from '@resourcery/core/storage';
import { call, PERSON_SCHEMA } from './handle-support';

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';

function makeService(apiKeys = false): Service {
  const service = createService(apiKeys ? { apiKeys: [{ key: 'k1', allow: [{ resources: ['*'], methods: ['GET'] }] }] } : {});
  service.addResource({
    name: 'Person',
    description: 'People we know',
    schema: PERSON_SCHEMA,
    key: 'Id',
    views: [{ name: 'Adults', description: 'Age 18 and over', conditions: 'Age>=18' }],
  });
  service.addResource({ name: 'Shop.Product', methods: ['GET', 'HEAD', 'REPORT'] });
  service.addResource({
    name: 'Order',
    key: ['Shop', 'No'],
    schema: { type: 'object', properties: { Shop: { type: ['string', 'null'] }, No: { type: 'integer' }, Total: { type: 'number' } } },
  });
  service.addBinaryResource({ name: 'Report.Pdf', description: 'A month as PDF', contentType: 'application/pdf', read: () => '%PDF-1.7' });
  service.defineEvent('Backup.Done', {
    description: 'A backup finished',
    schema: { type: 'object', properties: { Bytes: { type: 'integer' } } },
  });
  return service;
}

describe('OpenAPI document', () => {
  const service = makeService();
  const doc = service.openapi() as any;
  let dir: string;
  let tools: { valid: boolean; errors: string };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'openapi-'));
    await writeFile(join(dir, 'doc.json'), JSON.stringify(doc));
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(__dirname, 'openapi-tools.mjs'),
      join(dir, 'doc.json'),
      join(dir, 'api.ts'),
    ]);
    tools = JSON.parse(stdout);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('validates against the OpenAPI 3.1 schema with an independent validator (@readme/openapi-parser)', () => {
    expect(tools.errors).toBe('');
    expect(tools.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  test('the validator does reject a broken document', async () => {
    await writeFile(join(dir, 'broken.json'), JSON.stringify({ ...doc, paths: { '/x': { get: { responses: 'none' } } } }));
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(__dirname, 'openapi-tools.mjs'),
      join(dir, 'broken.json'),
      join(dir, 'broken.ts'),
    ]).catch((e) => e);
    expect(JSON.parse(stdout).valid).toBe(false);
  });

  test('describes each resource: schema, methods, views and the URI language', () => {
    expect(doc.components.schemas.Person).toMatchObject({
      type: 'object',
      properties: { Name: { type: 'string' } },
      required: ['Name', 'Age'],
    });
    expect(doc.components.schemas['Shop.Product']).toMatchObject({ type: 'object', additionalProperties: true });
    expect(
      Object.keys(doc.paths['/Person'])
        .filter((k) => !['summary', 'x-report'].includes(k))
        .sort(),
    ).toEqual(['delete', 'get', 'head', 'patch', 'post', 'put']);
    expect(
      Object.keys(doc.paths['/Shop.Product'])
        .filter((k) => k !== 'summary' && k !== 'x-report')
        .sort(),
    ).toEqual(['get', 'head']);
    expect(doc.paths['/Person-Adults/{conditions}/{metaConditions}'].description).toBe('View Adults: Age 18 and over');
    expect(doc.paths['/Person/{conditions}/{metaConditions}'].get.responses[200].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Person.Result',
    });
    expect(doc.paths['/Person'].post.requestBody.content['application/json'].schema.oneOf[0]).toEqual({
      $ref: '#/components/schemas/Person',
    });
    const meta = doc.components.parameters.metaConditions.description as string;
    for (const key of META_KEYS) expect(meta).toContain(`\`${key}\``);
    expect(doc.info.description).toContain('/Person/Age>30&Email!=null');
    expect(doc.info.description).toContain('`Id=1|2|3` (an IN list)');
    expect(doc.info.description).toContain('percent-encode');
  });

  test('a resource with a key has a path for one entity, its key parameters typed from the schema', () => {
    const person = doc.paths['/Person/{Id}'];
    expect(person.parameters).toEqual([expect.objectContaining({ name: 'Id', in: 'path', required: true, schema: { type: 'integer' } })]);
    expect(
      Object.keys(person)
        .filter((k) => !['summary', 'description', 'parameters'].includes(k))
        .sort(),
    ).toEqual(['delete', 'get', 'head', 'patch', 'put']);
    expect(person.get.responses[200].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Person.Result' });
    expect(person.get.operationId).toBe('get_Person_key');
    const order = doc.paths['/Order/{Shop},{No}'];
    expect(order.parameters.map((p: any) => [p.name, p.schema])).toEqual([
      ['Shop', { type: 'string' }],
      ['No', { type: 'integer' }],
    ]);
    expect(order.description).toContain('%2C');
    expect(doc.paths['/Shop.Product/{Id}']).toBeUndefined();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/Shop.Product'))).toEqual([
      '/Shop.Product',
      '/Shop.Product/{conditions}/{metaConditions}',
    ]);
    expect(doc['x-resources'].find((r: any) => r.name === 'Order').key).toEqual(['Shop', 'No']);
    expect(doc.info.description).toContain('/Person/7');
  });

  test('ETags: the ETag header of one-entity answers, If-Match on writes (412), If-None-Match on reads (304) and writes (412)', () => {
    const person = doc.paths['/Person/{Id}'];
    const names = (op: any) => (op.parameters ?? []).map((p: any) => doc.components.parameters[p.$ref.split('/').pop()].name);
    expect(names(person.get)).toEqual(['If-None-Match', 'If-Match']);
    expect(names(person.head)).toEqual(['If-None-Match', 'If-Match']);
    for (const method of ['put', 'patch', 'delete']) {
      expect(names(person[method])).toEqual(['If-Match', 'If-None-Match']);
      expect(person[method].responses[412]).toEqual({ $ref: '#/components/responses/PreconditionFailed' });
    }
    expect(names(doc.paths['/Person'].post)).toEqual([]);
    expect(person.get.responses[304]).toEqual({ $ref: '#/components/responses/NotModified' });
    expect(person.get.responses[200].headers.ETag).toEqual({ $ref: '#/components/headers/ETag' });
    expect(person.put.responses[201].headers.ETag).toEqual({ $ref: '#/components/headers/ETag' });
    expect(doc.paths['/Person/{conditions}/{metaConditions}'].patch.responses[200].headers.ETag).toBeDefined();
    expect(doc.components.responses.NotModified.content).toBeUndefined();
    expect(doc.components.responses.PreconditionFailed.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorBody',
    });
    expect(doc.components.schemas.ErrorBody.properties.ErrorCode.enum).toContain('PreconditionFailed');
  });

  test('content types, the error body and its ErrorInfo header', () => {
    const content = doc.paths['/Person'].get.responses[200].content;
    expect(Object.keys(content)).toEqual([
      'application/json',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/jsonlines',
    ]);
    expect(doc.components.schemas.ErrorBody.properties.ErrorCode.enum).toEqual(ERROR_CODES);
    expect(doc.components.responses.Error.headers.ErrorInfo).toEqual({ $ref: '#/components/headers/ErrorInfo' });
    expect(doc.paths['/Person'].get.responses.default).toEqual({ $ref: '#/components/responses/Error' });
  });

  test('events are webhooks entries with their payload schema', () => {
    expect(doc.webhooks['Person.Inserted'].post.requestBody.content['application/json'].schema).toEqual({
      type: 'array',
      items: PERSON_SCHEMA,
    });
    expect(doc.webhooks['Backup.Done'].post.summary).toBe('A backup finished');
    expect(doc['x-resources'].find((r: any) => r.name === 'Backup.Done').kind).toBe('EventResource');
  });

  test('API keys appear as security schemes only when the service has keys', () => {
    expect(doc.components.securitySchemes).toBeUndefined();
    const secured = makeService(true).openapi() as any;
    expect(Object.keys(secured.components.securitySchemes)).toEqual(['apiKey', 'basic']);
    expect(secured.security).toEqual([{ apiKey: [] }, { basic: [] }]);
  });

  test('openapi-typescript generates types that type-check entities', async () => {
    await writeFile(
      join(dir, 'use.ts'),
      [
        "import type { components } from './api';",
        "type Person = components['schemas']['Person'];",
        "export const ok: Person = { Name: 'Ann', Age: 30, City: null };",
        '// @ts-expect-error Age is an integer',
        "export const bad: Person = { Name: 'Ann', Age: 'thirty' };",
        "export const code: components['schemas']['ErrorBody']['ErrorCode'] = 'UnknownResource';",
        // Key parameters are typed from the schema.
        "import type { paths } from './api';",
        "export const id: paths['/Person/{Id}']['get']['parameters']['path']['Id'] = 7;",
        '// @ts-expect-error Id is an integer',
        "export const badId: paths['/Person/{Id}']['get']['parameters']['path']['Id'] = 'seven';",
        "export const ifMatch: NonNullable<paths['/Person/{Id}']['patch']['parameters']['header']>['If-Match'] = '\"1.4\"';",
        "export const notModified: paths['/Person/{Id}']['get']['responses'][304]['content'] = undefined as never;",
        // The generated types type @resourcery/client's results.
        `import { createClient } from ${JSON.stringify(join(__dirname, '../../client/src/index'))};`,
        "const people = createClient({ baseUrl: 'http://localhost' }).resource<Person>('Person').where('Age', '>', 30);",
        'export const names: Promise<string[]> = people.get().then((rows) => rows.map((p) => p.Name));',
        '// @ts-expect-error Name is a string',
        'export const wrong: Promise<number[]> = people.get().then((rows) => rows.map((p) => p.Name));',
      ].join('\n'),
    );
    const program = ts.createProgram([join(dir, 'use.ts')], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
  });
});

describe('GET / negotiation', () => {
  const service = makeService();

  test('JSON listing by default and for clients that name JSON', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { accept: '*/*' },
      { accept: 'application/json' },
      { accept: 'application/json, text/html' },
    ]) {
      const res = await call(service, 'GET', '/', { headers });
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.json.Data.map((r: any) => r.Name)).toContain('Person');
    }
  });

  test.each(['application/vnd.oai.openapi+json', 'application/openapi+json', 'application/json;q=0.5, application/vnd.oai.openapi+json'])(
    '%s answers the document',
    async (accept) => {
      const res = await call(service, 'GET', '/', { headers: { accept }, basePath: '/api' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/(vnd\.oai\.)?openapi\+json; charset=utf-8$/);
      expect(res.json.openapi).toBe('3.1.0');
      expect(res.json.servers).toEqual([{ url: '/api' }]);
    },
  );

  test('application/yaml answers the same document as JSON text (valid YAML 1.2)', async () => {
    const res = await call(service, 'GET', '/', { headers: { accept: 'application/yaml' } });
    expect(res.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(res.json.paths['/Person']).toBeDefined();
  });

  test('a browser gets the explorer page, with nothing loaded from other hosts', async () => {
    const res = await call(service, 'GET', '/', { headers: { accept: BROWSER }, basePath: '/api' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<title>Resourcery explorer</title>');
    expect(res.text).toContain('var base = "/api";');
    expect(res.text).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
  });

  test('only the root negotiates: a resource URI with a browser Accept is still JSON', async () => {
    const res = await call(service, 'GET', '/Service.Admin.Protocol', { headers: { accept: BROWSER } });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  test('with API keys the page is open, the document needs a valid key', async () => {
    const secured = makeService(true);
    expect((await call(secured, 'GET', '/', { headers: { accept: BROWSER } })).status).toBe(200);
    expect((await call(secured, 'GET', '/', { headers: { accept: 'application/openapi+json' } })).status).toBe(401);
    const ok = await call(secured, 'GET', '/', { headers: { accept: 'application/openapi+json', authorization: 'apikey k1' } });
    expect(ok.json.components.securitySchemes.apiKey.name).toBe('Authorization');
  });
});
