import { envelopeData, startExample, type RunningExample } from '../start-example';

let example: RunningExample;
beforeAll(async () => {
  example = await startExample('koa/server.mjs');
});
afterAll(() => example.stop());

describe('the Koa example serves albums under the /api prefix', () => {
  test('albums are selected with conditions and projected', async () => {
    const res = await fetch(`${example.origin}/api/Album/Year%3E1958/select=Title,Year`);
    expect(res.status).toBe(200);
    expect(await envelopeData(res)).toEqual([
      { Title: 'Kind of Blue', Year: 1959 },
      { Title: 'The Dark Side of the Moon', Year: 1972 },
    ]);
  });

  test('a PATCH changes the one album its conditions match', async () => {
    const res = await fetch(`${example.origin}/api/Album/Title=The%20Dark%20Side%20of%20the%20Moon`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"Year":1973}',
    });
    expect(res.status).toBe(200);
    expect(await envelopeData(res)).toEqual([{ Title: 'The Dark Side of the Moon', Artist: 'Pink Floyd', Year: 1973 }]);
  });

  test("requests outside the prefix reach the app's own middleware", async () => {
    expect(await (await fetch(`${example.origin}/health`)).json()).toEqual({ ok: true });
    expect((await fetch(`${example.origin}/Album`)).status).toBe(404);
  });
});
