import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { call } from './handle-support';

/** `embed` in the OpenAPI document (docs/openapi.md#relations), for each reader's rights. */

const OPENAPI = { accept: 'application/openapi+json' };

function shop(): Service {
  const s = createService({
    apiKeys: [
      { key: 'all', allow: [{ resources: ['*'], methods: ['GET'] }] },
      // May read customers and orders, not the customers' notes.
      { key: 'some', allow: [{ resources: ['Customer', 'Order'], methods: ['GET'] }] },
    ],
  });
  s.addResource({
    name: 'Customer',
    key: 'Id',
    storage: new MemoryStorage([{ Id: 1, Name: 'Ann' }]),
    schema: { type: 'object', properties: { Id: { type: 'integer' }, Name: { type: 'string' } }, additionalProperties: false },
    relations: { Orders: { toMany: 'Order', via: 'CustomerId', maxEmbedded: 50 }, Notes: { toMany: 'Note', via: 'CustomerId' } },
  });
  s.addResource({
    name: 'Order',
    key: 'Id',
    schema: { type: 'object', properties: { Id: { type: 'integer' }, CustomerId: { type: 'integer' }, Total: { type: 'number' } } },
    relations: { Customer: { toOne: 'Customer', via: 'CustomerId' } },
  });
  s.addResource({ name: 'Note', key: 'Id', relations: { Customer: { toOne: 'Customer', via: 'CustomerId' } } });
  return s;
}

async function documentFor(key: string): Promise<any> {
  const res = await call(shop(), 'GET', '/', { headers: { ...OPENAPI, authorization: `apikey ${key}` } });
  expect(res.status).toBe(200);
  return res.json;
}

describe('embed in the OpenAPI document', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'openapi-embed-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function tools(doc: unknown, name: string): Promise<{ valid: boolean; errors: string }> {
    await writeFile(join(dir, `${name}.json`), JSON.stringify(doc));
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(__dirname, 'openapi-tools.mjs'),
      join(dir, `${name}.json`),
      join(dir, `${name}.ts`),
    ]);
    return JSON.parse(stdout);
  }

  test('the embedded schemas: to-one the related schema or null, to-many an array of it; valid OpenAPI 3.1', async () => {
    const doc = await documentFor('all');
    expect(await tools(doc, 'all')).toEqual({ valid: true, errors: '' });
    const customer = doc.components.schemas['Customer.Embedded'];
    expect(customer.properties.Name).toEqual({ type: 'string' });
    expect(customer.properties.Orders).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/Order' },
      maxItems: 50,
    });
    expect(customer.properties.Notes).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Note' } });
    expect(customer.required).toBeUndefined();
    expect(doc.components.schemas['Order.Embedded'].properties.Customer).toMatchObject({
      oneOf: [{ $ref: '#/components/schemas/Customer' }, { type: 'null' }],
    });
    // A GET's answer holds them; a body to write does not.
    expect(doc.components.schemas['Customer.Result'].properties.Data.items).toEqual({ $ref: '#/components/schemas/Customer.Embedded' });
    expect(doc.paths['/Customer'].get.responses[200].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Customer.Result',
    });
    expect(doc.components.schemas.Customer.properties.Orders).toBeUndefined();
    // The relations embed takes, per resource, in its metaConditions parameter (the key path has none).
    const meta = doc.paths['/Customer/{conditions}/{metaConditions}'].parameters[1];
    expect(meta).toMatchObject({ name: 'metaConditions', in: 'path', 'x-embed': ['Orders', 'Notes'] });
    expect(meta.description).toContain('Here `embed` takes: `Orders`, `Notes`');
    expect(doc.paths['/Order/{conditions}/{metaConditions}'].parameters[1]['x-embed']).toEqual(['Customer']);
    expect(doc.paths['/Customer/{Id}'].parameters.map((p: any) => p.name)).toEqual(['Id']);
    expect(doc['x-resources'].find((r: any) => r.name === 'Customer').embed).toEqual(['Orders', 'Notes']);
  });

  test('a relation to a resource the reader may not GET is not described, as embed would refuse it (403)', async () => {
    const doc = await documentFor('some');
    expect(await tools(doc, 'some')).toEqual({ valid: true, errors: '' });
    expect(doc.components.schemas.Note).toBeUndefined();
    const customer = doc.components.schemas['Customer.Embedded'];
    expect(Object.keys(customer.properties)).toEqual(['Id', 'Name', 'Orders']);
    expect(doc.paths['/Customer/{conditions}/{metaConditions}'].parameters[1]['x-embed']).toEqual(['Orders']);
    expect(doc['x-resources'].find((r: any) => r.name === 'Customer').embed).toEqual(['Orders']);
    // What the document leaves out is what the service refuses that reader.
    const refused = await call(shop(), 'GET', '/Customer/_/embed=Notes', { headers: { authorization: 'apikey some' } });
    expect(refused.status).toBe(403);
  });

  test('a resource without relations keeps the shared parameter and its own schema in its result', async () => {
    const s = createService();
    s.addResource({ name: 'Plain', key: 'Id' });
    const doc = s.openapi() as any;
    expect(doc.components.schemas['Plain.Embedded']).toBeUndefined();
    expect(doc.components.schemas['Plain.Result'].properties.Data.items).toEqual({ $ref: '#/components/schemas/Plain' });
    expect(doc.paths['/Plain/{conditions}/{metaConditions}'].parameters[1]).toEqual({ $ref: '#/components/parameters/metaConditions' });
  });

  test('openapi-typescript types the embedded values', async () => {
    await tools(await documentFor('all'), 'typed');
    await writeFile(
      join(dir, 'use.ts'),
      [
        "import type { components } from './typed';",
        "type Customer = components['schemas']['Customer.Embedded'];",
        "export const ok: Customer = { Id: 1, Name: 'Ann', Orders: [{ Id: 11, CustomerId: 1, Total: 5 }] };",
        '// @ts-expect-error an order has a numeric Total',
        "export const bad: Customer = { Id: 1, Orders: [{ Id: 11, Total: 'five' }] };",
        "export const none: components['schemas']['Order.Embedded'] = { Id: 11, Customer: null };",
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
      lib: ['lib.es2022.d.ts'],
    });
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });
});
