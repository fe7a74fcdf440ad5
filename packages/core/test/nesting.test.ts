import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { call, RAW } from './handle-support';
import { workbookOf } from './content-types-support';

/** DESIGN 13: input nesting deeper than a limit (default 64) is 400 InvalidResourceEntity naming the limit. */

function nested(depth: number): Record<string, unknown> {
  // Built without recursion: the deepest level is an empty object.
  let value: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

/** JSON text of an entity `depth` levels deep, without JSON.stringify (which cannot write 6,000 levels). */
function nestedText(depth: number): string {
  return '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
}

let service: Service;
beforeEach(() => {
  service = createService();
  service.addResource({ name: 'Doc', storage: new MemoryStorage([{ Id: 1 }]) });
});

describe('the default limit is 64 levels', () => {
  test('64 levels are accepted and read back', async () => {
    const r = await call(service, 'POST', '/Doc', { body: nested(64), headers: RAW });
    expect(r.status).toBe(201);
    expect((await call(service, 'GET', '/Doc', { headers: RAW })).json).toHaveLength(2);
  });

  test('65 levels are 400 InvalidResourceEntity naming the limit, and nothing is written', async () => {
    const r = await call(service, 'POST', '/Doc', { body: nested(65) });
    expect(r.status).toBe(400);
    expect(r.json.ErrorCode).toBe('InvalidResourceEntity');
    expect(r.json.Message).toMatch(/deeper than 64 levels.*maxNestingDepth/);
    expect((await call(service, 'REPORT', '/Doc', { headers: RAW })).json).toBe(1);
  });

  test('a 36 KB body nested 6,000 levels deep is refused, linked to its record, and the service goes on', async () => {
    const r = await call(service, 'POST', '/Doc', { body: nestedText(6000) });
    expect(r.status).toBe(400);
    expect(r.headers.errorinfo).toBe(r.json.MoreInfoAt);
    const record = await call(service, 'GET', r.json.MoreInfoAt, { headers: RAW });
    expect(record.json[0].Body).toMatch(/nested deeper than 1000 levels: not stored/);
    expect((await call(service, 'POST', '/Doc', { body: { Id: 2 } })).status).toBe(201);
    expect((await call(service, 'GET', '/Doc', { headers: RAW })).json).toEqual([{ Id: 1 }, { Id: 2 }]);
  });

  test('arrays count as levels, and each item of an array body is checked', async () => {
    let deep: unknown = [];
    for (let i = 0; i < 70; i++) deep = [deep];
    const r = await call(service, 'POST', '/Doc', { body: [{ ok: true }, { deep }] });
    expect(r.status).toBe(400);
    expect(r.json.Message).toMatch(/^Item 1 of the body nests/);
  });

  test('PATCH and PUT bodies are checked too', async () => {
    expect((await call(service, 'PATCH', '/Doc/Id=1', { body: nested(65) })).status).toBe(400);
    expect((await call(service, 'PUT', '/Doc/Id=1', { body: nested(65) })).status).toBe(400);
    expect((await call(service, 'GET', '/Doc', { headers: RAW })).json).toEqual([{ Id: 1 }]);
  });
});

describe('every input that becomes entities is checked', () => {
  test('a JSON cell of an Excel workbook', async () => {
    const cell = JSON.stringify(nested(70));
    const res = await service.handle({
      method: 'POST',
      uri: '/Doc',
      headers: { 'content-type': 'excel' },
      body: await workbookOf({ S: [['Tree'], [cell]] }),
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(String(res.body)).Message).toMatch(/deeper than 64 levels/);
  });

  test('a Source body', async () => {
    service.addResource({ name: 'Copy' });
    // A local Source reads this service; put the deep entity here without the check.
    service.addResource({ name: 'Deep', storage: new MemoryStorage([nested(70)]) });
    const r = await call(service, 'POST', '/Copy', { headers: { source: 'GET /Deep' } });
    expect(r.status).toBe(400);
    expect(r.json.Message).toMatch(/deeper than 64 levels/);
  });

  test('macro and webhook bodies (entities of the admin resources)', async () => {
    const macro = await call(service, 'POST', '/Service.Admin.Macro', { body: { Name: 'm', Uri: '/Doc', Body: nested(70) } });
    expect(macro.status).toBe(400);
    expect(macro.json.Message).toMatch(/deeper than 64 levels/);
  });
});

describe('the limit is configurable', () => {
  test('maxNestingDepth: 3 refuses a fourth level', async () => {
    const strict = createService({ maxNestingDepth: 3 });
    strict.addResource({ name: 'Doc' });
    expect((await call(strict, 'POST', '/Doc', { body: nested(3) })).status).toBe(201);
    const r = await call(strict, 'POST', '/Doc', { body: nested(4) });
    expect(r.status).toBe(400);
    expect(r.json.Message).toMatch(/deeper than 3 levels/);
  });

  test.each([0, -1, 1.5, 1001])('maxNestingDepth %p is refused when the service is made', (depth) => {
    expect(() => createService({ maxNestingDepth: depth })).toThrow(/maxNestingDepth must be a whole number from 1 to 1000/);
  });

  test('an option given as undefined keeps its default', async () => {
    const s = createService({ maxNestingDepth: undefined, maxBodyBytes: undefined });
    expect(s.options.maxNestingDepth).toBe(64);
    expect(s.options.maxBodyBytes).toBe(10 * 1024 * 1024);
  });
});
