import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import createFetchClient from 'openapi-fetch';
import ts from 'typescript';
import { encodeCondition, pathSerializer } from '@resourcery/client';
import { createService, type Service } from '@resourcery/core';
import { createServer } from '@resourcery/node';

/**
 * Generated clients (docs/client.md, "Generated clients"): types from openapi-typescript,
 * requests by openapi-fetch, against a real server. openapi-fetch percent-encodes path
 * parameters, so a conditioned query needs the client's pathSerializer.
 */

const CLIENT_SRC = join(__dirname, '../src/index');

function makeService(): Service {
  const service = createService();
  service.addResource({
    name: 'Person',
    key: 'Id',
    schema: {
      type: 'object',
      properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: ['integer', 'null'] } },
      required: ['Id', 'Name'],
    },
  });
  service.addResource({
    name: 'Shop.Product',
    key: 'Sku',
    schema: { type: 'object', properties: { Sku: { type: 'string' }, Price: { type: 'number' } } },
  });
  return service;
}

const PEOPLE = [
  { Id: 1, Name: 'Ann', Age: 30 },
  { Id: 2, Name: 'R&D=Bob', Age: 41 },
  { Id: 3, Name: 'Cy', Age: null },
  { Id: 4, Name: 'Dee', Age: 52 },
];

describe('openapi-typescript + openapi-fetch', () => {
  let server: http.Server;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    const service = makeService();
    server = createServer(service);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = await mkdtemp(join(tmpdir(), 'resourcery-openapi-fetch-'));
    const post = await fetch(`${base}/Person`, {
      method: 'POST',
      body: JSON.stringify(PEOPLE),
      headers: { 'content-type': 'application/json' },
    });
    expect(post.status).toBe(201);
    const products = [
      { Sku: 'a~b', Price: 3 },
      { Sku: 'x/y', Price: 9 },
    ];
    expect(
      (
        await fetch(`${base}/Shop.Product`, {
          method: 'POST',
          body: JSON.stringify(products),
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(201);
    // The document the server serves, and the types openapi-typescript generates from it.
    const doc = await (await fetch(`${base}/`, { headers: { accept: 'application/openapi+json' } })).text();
    await writeFile(join(dir, 'doc.json'), doc);
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(__dirname, '../../core/test/openapi-tools.mjs'),
      join(dir, 'doc.json'),
      join(dir, 'api.ts'),
    ]);
    expect(JSON.parse(stdout)).toEqual({ valid: true, errors: '' });
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  test('by default openapi-fetch encodes the operators, and the service cannot read the conditions (400)', async () => {
    const api = createFetchClient<any>({ baseUrl: base });
    const { response } = await api.GET('/Person/{conditions}/{metaConditions}', {
      params: { path: { conditions: 'Age>35', metaConditions: 'limit=10' } },
    });
    expect(response.url).toBe(`${base}/Person/Age%3E35/limit%3D10`);
    expect(response.status).toBe(400);
  });

  test('with pathSerializer, conditions and meta-conditions go as written and the query runs', async () => {
    const api = createFetchClient<any>({ baseUrl: base, pathSerializer });
    const older = await api.GET('/Person/{conditions}/{metaConditions}', {
      params: { path: { conditions: 'Age>35|Age=null', metaConditions: 'order_desc=Id&select=Id' } },
    });
    expect(older.response.status).toBe(200);
    expect(older.data.Data).toEqual([{ Id: 4 }, { Id: 3 }, { Id: 2 }]);
    // A value holding & and = is encoded by encodeCondition; the operator stays an operator.
    const conditions = [
      encodeCondition({ property: 'Name', operator: '=', value: 'R&D=Bob' }),
      encodeCondition({ property: 'Age', operator: '>', value: 40 }),
    ].join('&');
    expect(conditions).toBe("Name='R%26D%3DBob'&Age>40");
    const bob = await api.GET('/Person/{conditions}/{metaConditions}', {
      params: { path: { conditions, metaConditions: 'select=Id,Name' } },
    });
    expect(bob.data.Data).toEqual([{ Id: 2, Name: 'R&D=Bob' }]);
    // Left out: `_`, no condition and no meta-condition.
    const all = await api.GET('/Person/{conditions}/{metaConditions}', { params: { path: {} } });
    expect([all.response.url, all.data.DataCount]).toEqual([`${base}/Person/_/_`, 4]);
    // Key parameters are one value each, encoded (`~` too, which a bare key may not hold as it is).
    const one = await api.GET('/Shop.Product/{Sku}', { params: { path: { Sku: 'a~b' } } });
    expect([one.response.url, one.data.Data]).toEqual([`${base}/Shop.Product/a%7Eb`, [{ Sku: 'a~b', Price: 3 }]]);
    const slash = await api.GET('/Shop.Product/{Sku}', { params: { path: { Sku: 'x/y' } } });
    expect(slash.data.Data).toEqual([{ Sku: 'x/y', Price: 9 }]);
    const patched = await api.PATCH('/Person/{Id}', { params: { path: { Id: 3 } }, body: { Age: 33 } });
    expect([patched.response.status, patched.data.Data[0].Age]).toEqual([200, 33]);
  });

  test('pathSerializer refuses a raw / in conditions and a missing key before anything is sent', () => {
    expect(() => pathSerializer('/Person/{conditions}/{metaConditions}', { conditions: 'Name=a/b' })).toThrow(TypeError);
    expect(() => pathSerializer('/Person/{Id}', {})).toThrow(TypeError);
  });

  test('the generated types check the calls, and ResourcesOf<paths> types @resourcery/client', async () => {
    const use = [
      "import createFetchClient from 'openapi-fetch';",
      "import type { paths } from './api';",
      `import { createClient, pathSerializer, type ResourcesOf } from ${JSON.stringify(CLIENT_SRC)};`,
      "const api = createFetchClient<paths, 'application/json'>({ baseUrl: 'http://localhost', pathSerializer });",
      'export async function older() {',
      "  const { data } = await api.GET('/Person/{conditions}/{metaConditions}', { params: { path: { conditions: 'Age>35', metaConditions: 'select=Id' } } });",
      '  const ages: Array<number | null | undefined> = (data?.Data ?? []).map((p) => p.Age);',
      '  // @ts-expect-error Name is a string',
      '  const wrong: number[] = (data?.Data ?? []).map((p) => p.Name);',
      '  return [ages, wrong];',
      '}',
      "export const key = api.GET('/Person/{Id}', { params: { path: { Id: 3 } } });",
      '// @ts-expect-error Id is an integer',
      "export const badKey = api.GET('/Person/{Id}', { params: { path: { Id: 'three' } } });",
      // The resource map generated from the document.
      "const typed = createClient<ResourcesOf<paths>>({ baseUrl: 'http://localhost' });",
      "export const q = typed.resource('Shop.Product').where('Price', '<', 5).select('Sku');",
      'export const rows: Promise<Array<{ Sku?: string }>> = q.get();',
      '// @ts-expect-error no resource Persons',
      "typed.resource('Persons');",
      '// @ts-expect-error Age is a number',
      "typed.resource('Person').where('Age', '>', 'old');",
    ];
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      // openapi-fetch is found from this repository's node_modules.
      baseUrl: join(__dirname, '../../..'),
      paths: { 'openapi-fetch': ['node_modules/openapi-fetch'] },
    };
    const check = async (lines: string[]) => {
      await writeFile(join(dir, 'use.ts'), lines.join('\n'));
      const program = ts.createProgram([join(dir, 'use.ts')], options);
      return ts.getPreEmitDiagnostics(program).map((d) => ({
        line: d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 : 0,
        message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
      }));
    };
    expect(await check(use)).toEqual([]);
    // Each @ts-expect-error marks a real error.
    const marked = use.flatMap((l, i) => (l.includes('@ts-expect-error') ? [i + 2] : []));
    const errors = await check(use.map((l) => l.replace('@ts-expect-error', '(expected an error)')));
    expect([...new Set(errors.map((e) => e.line))].sort((a, b) => a - b)).toEqual(marked);
  });
});
