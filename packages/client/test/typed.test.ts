import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import ts from 'typescript';
import { createClient } from '@resourcery/client';
import { createService } from '@resourcery/core';
import { createServer } from '@resourcery/node';

/**
 * The typed client (docs/client.md, "A client that checks names"): the compile-time checks
 * in types/typed-fixture.ts hold, each of its @ts-expect-error marks a real error, and the
 * typed queries send what the untyped ones send.
 */

const ROOT = join(__dirname, '../../..');
const FIXTURE = join(__dirname, 'types/typed-fixture.ts');

function compile(text: string, old?: ts.Program): { program: ts.Program; errors: Array<{ line: number; message: string }> } {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === FIXTURE.replace(/\\/g, '/') || name === FIXTURE ? ts.createSourceFile(name, text, language) : read(name, language, ...rest);
  const program = ts.createProgram([FIXTURE], options, host, old);
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ({
    line: d.file ? d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 : 0,
    message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  }));
  return { program, errors };
}

describe('typed client: compile-time checks', () => {
  test('the fixture compiles, and without its @ts-expect-error comments each marked line is an error', () => {
    const text = ts.sys.readFile(FIXTURE)!;
    const first = compile(text);
    expect(first.errors).toEqual([]);

    const lines = text.split('\n');
    const marked = lines.flatMap((l, i) => (/^\s*\/\/ @ts-expect-error\b/.test(l) ? [i + 2] : []));
    expect(marked.length).toBeGreaterThanOrEqual(24);
    const stripped = lines.map((l) => l.replace(/\/\/ @ts-expect-error\b/, '// (expected an error)')).join('\n');
    const second = compile(stripped, first.program);
    const failing = new Set(second.errors.map((e) => e.line));
    // Every marked line fails, and nothing else does.
    expect(marked.filter((line) => !failing.has(line))).toEqual([]);
    expect([...failing].filter((line) => !marked.includes(line))).toEqual([]);
  });
});

interface Person {
  Id: number;
  Name: string;
  Age: number | null;
  Address?: { City: string };
}

describe('typed client against a real server', () => {
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    const service = createService();
    service.addResource({ name: 'Person', key: 'Id' });
    server = createServer(service);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await createClient({ baseUrl: base })
      .resource('Person')
      .post([
        { Id: 1, Name: 'Ann', Age: 30, Address: { City: 'Oslo' } },
        { Id: 2, Name: 'Bob', Age: null },
        { Id: 3, Name: 'Cy', Age: 41, Address: { City: 'Turku' } },
      ]);
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('the same URIs as the untyped client, and select answers exactly the narrowed properties', async () => {
    const api = createClient<{ Person: Person }>({ baseUrl: base });
    const untyped = createClient({ baseUrl: base });
    const typed = api
      .resource('Person')
      .where('Age', '>', 20)
      .where({ Id: [1, 3] })
      .orderDesc('Age')
      .select('Name', 'Address.City');
    const plain = untyped
      .resource('Person')
      .where('Age', '>', 20)
      .where({ Id: [1, 3] })
      .orderDesc('Age')
      .select('Name', 'Address.City');
    expect(typed.uri()).toBe(plain.uri());
    const rows = await typed.get();
    expect(rows).toEqual([
      { Name: 'Cy', 'Address.City': 'Turku' },
      { Name: 'Ann', 'Address.City': 'Oslo' },
    ]);
    // The narrowed type reads what came back.
    expect(rows.map((r) => `${r.Name.toUpperCase()} ${r['Address.City'] ?? '-'}`)).toEqual(['CY Turku', 'ANN Oslo']);
    expect(await api.resource('Person').where('Age', '=', null).select('Id').get()).toEqual([{ Id: 2 }]);
  });

  test('embed sends embed=<relation>[,...]', () => {
    const api = createClient<{ Person: Person; Order: { Id: number; CustomerId: number } }, { Order: { Customer: { toOne: 'Person' } } }>({
      baseUrl: base,
    });
    expect(api.resource('Order').embed('Customer').select('Id', 'Customer.Name').uri()).toBe(
      '/Order/_/embed=Customer&select=Id,Customer.Name',
    );
    expect(createClient({ baseUrl: base }).resource('Post').embed('Author', 'Comments').uri()).toBe('/Post/_/embed=Author,Comments');
    expect(() => createClient({ baseUrl: base }).resource('Post').embed()).toThrow(TypeError);
  });
});
