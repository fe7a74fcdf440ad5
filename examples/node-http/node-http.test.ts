import { envelopeData, startExample, type RunningExample } from '../start-example';

let example: RunningExample;
beforeAll(async () => {
  example = await startExample('node-http/server.mjs');
});
afterAll(() => example.stop());

describe('the node:http example serves people under /api', () => {
  test('a query with conditions and meta-conditions answers from the seeded people', async () => {
    const res = await fetch(`${example.origin}/api/Person/Age%3E30/order_asc=Name&select=Name`);
    expect(res.status).toBe(200);
    expect(await envelopeData(res)).toEqual([{ Name: 'Alan' }, { Name: 'Grace' }]);
  });

  test('the Adults view applies its own conditions and order', async () => {
    const res = await fetch(`${example.origin}/api/Person-Adults/_/select=Name`, { headers: { accept: 'application/json;raw=true' } });
    expect(await res.json()).toEqual([{ Name: 'Alan' }, { Name: 'Grace' }]);
  });

  test('an entity that breaks the schema is refused with 400 InvalidResourceEntity', async () => {
    const res = await fetch(`${example.origin}/api/Person`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Id: 9, Age: -1 }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      ErrorCode: 'InvalidResourceEntity',
      Data: { Name: expect.any(String), Age: expect.any(String) },
    });
  });

  test('paths outside /api are not the service', async () => {
    expect((await fetch(`${example.origin}/Person`)).status).toBe(404);
    expect(await (await fetch(`${example.origin}/Person`)).text()).toBe('Not found');
  });
});
