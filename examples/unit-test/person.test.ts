// Resources tested with no HTTP at all: service.handle takes the same plain request an
// adapter would build and resolves to { status, headers, body }.
import type { Service } from '@resourcery/core';
import { createPeopleService } from './person';

const RAW = { accept: 'application/json;raw=true', 'content-type': 'application/json' };
let service: Service;

async function call(method: string, uri: string, body?: unknown) {
  const res = await service.handle({ method, uri, headers: RAW, body: body === undefined ? null : JSON.stringify(body) });
  return { status: res.status, json: typeof res.body === 'string' && res.body ? JSON.parse(res.body) : null };
}

beforeEach(async () => {
  service = createPeopleService();
  await call('POST', '/Person', [
    { Id: 1, Name: 'Ada', Email: ' Ada@Example.ORG ', Born: '1815-12-10', PinHash: 'x1' },
    { Id: 2, Name: 'Charles', Email: null, Born: '1791-12-26' },
    { Id: 3, Name: 'Mary', Email: 'mary@example.org', Born: '1780-12-26' },
  ]);
});

describe('Person', () => {
  test('emails are stored trimmed and lower-case, and the pin hash never leaves', async () => {
    const { json } = await call('GET', '/Person/Id=1');
    expect(json).toEqual([{ Id: 1, Name: 'Ada', Email: 'ada@example.org', Born: '1815-12-10' }]);
  });

  test('the Reachable view lists people with an email, by name', async () => {
    expect((await call('GET', '/Person-Reachable/_/select=Name')).json).toEqual([{ Name: 'Ada' }, { Name: 'Mary' }]);
  });

  test('condition values are typed by the schema', async () => {
    expect((await call('GET', '/Person/Id=abc')).json.ErrorCode).toBe('InvalidConditionValueType');
    expect((await call('REPORT', '/Person/Born<1800-01-01')).json).toBe(2);
  });

  test('an entity outside the schema is refused and nothing is stored', async () => {
    const res = await call('POST', '/Person', [
      { Id: 4, Name: 'Alan' },
      { Id: 5, Nickname: 'x' },
    ]);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ ErrorCode: 'InvalidResourceEntity', Data: { Name: expect.any(String) } });
    expect((await call('REPORT', '/Person')).json).toBe(3);
  });

  test('the beforeWrite hook refuses a changed Id', async () => {
    const res = await call('PATCH', '/Person/Id=2', { Id: 20 });
    expect([res.status, res.json.Data]).toEqual([400, { Id: 'is read-only' }]);
  });
});
