import { envelopeData, startExample, type RunningExample } from '../start-example';

let example: RunningExample;
beforeAll(async () => {
  example = await startExample('fastify/server.mjs');
});
afterAll(() => example.stop());

describe('the Fastify example serves books under /api beside its own routes', () => {
  test('books are found by their short name with conditions and order; REPORT counts them', async () => {
    const res = await fetch(`${example.origin}/api/Book/Year%3C1950/order_asc=Year&select=Title,Year`);
    expect(res.status).toBe(200);
    expect(await envelopeData(res)).toEqual([
      { Title: 'Brave New World', Year: 1932 },
      { Title: 'Nineteen Eighty-Four', Year: 1949 },
    ]);
    const report = await fetch(`${example.origin}/api/Book/Year%3C1950`, {
      method: 'REPORT',
      headers: { accept: 'application/json;raw=true' },
    });
    expect(await report.text()).toBe('2');
  });

  test("the app's user from its onRequest hook reaches the rules: a guest cannot write, a user can", async () => {
    const book = JSON.stringify({ Isbn: '978-0-441-17271-9', Title: 'Dune', Year: 1965 });
    const headers = { 'content-type': 'application/json' };
    expect((await fetch(`${example.origin}/api/Book`, { method: 'POST', headers, body: book })).status).toBe(403);
    const posted = await fetch(`${example.origin}/api/Book`, { method: 'POST', headers: { ...headers, 'x-user': 'ann' }, body: book });
    expect(posted.status).toBe(201);
  });

  test("errors link their record under /api; the app's own routes still answer", async () => {
    const res = await fetch(`${example.origin}/api/Nowhere`);
    expect(res.status).toBe(404);
    expect(res.headers.get('errorinfo')).toMatch(/^\/api\/Service\.Admin\.Error\/id=/);
    expect(await (await fetch(`${example.origin}/health`)).json()).toEqual({ ok: true });
    const feedback = await fetch(`${example.origin}/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"stars":5}',
    });
    expect([feedback.status, await feedback.json()]).toEqual([202, { received: { stars: 5 } }]);
  });
});
