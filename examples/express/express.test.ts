import { envelopeData, startExample, type RunningExample } from '../start-example';

let example: RunningExample;
beforeAll(async () => {
  example = await startExample('express/server.mjs');
});
afterAll(() => example.stop());

describe('the Express example serves books under /api beside its own routes', () => {
  test('books are found by their short name with conditions and order', async () => {
    const res = await fetch(`${example.origin}/api/Book/Year%3C1950/order_asc=Year&select=Title,Year`);
    expect(res.status).toBe(200);
    expect(await envelopeData(res)).toEqual([
      { Title: 'Brave New World', Year: 1932 },
      { Title: 'Nineteen Eighty-Four', Year: 1949 },
    ]);
  });

  test('errors link their record under /api', async () => {
    const res = await fetch(`${example.origin}/api/Nowhere`);
    expect(res.status).toBe(404);
    expect(res.headers.get('errorinfo')).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
    const record = await fetch(example.origin + res.headers.get('errorinfo'));
    expect((await envelopeData(record))[0].ErrorCode).toBe('UnknownResource');
  });

  test("the app's own routes still answer", async () => {
    expect(await (await fetch(`${example.origin}/health`)).json()).toEqual({ ok: true });
    const feedback = await fetch(`${example.origin}/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"stars":5}',
    });
    expect([feedback.status, await feedback.json()]).toEqual([202, { received: { stars: 5 } }]);
  });
});
