import { startExample, type RunningExample } from '../start-example';

let example: RunningExample;
beforeAll(async () => {
  example = await startExample('binary-report/server.mjs');
});
afterAll(() => example.stop());

describe('the binary-report example serves a month of sales as CSV', () => {
  test('the CSV of a month, whatever Accept asks; its ETag answers 304 until the sales change', async () => {
    const url = `${example.origin}/Sales.Csv/Month=2026-11`;
    const res = await fetch(url, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(await res.text()).toBe('Id,Item,Amount\r\n2,Pencil,1.5\r\n3,"Fountain pen, ""Deluxe""",35\r\n4,Ink,6\r\n,Total,42.5\r\n');
    const etag = res.headers.get('etag')!;
    expect((await fetch(url, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const sold = await fetch(`${example.origin}/Sales`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Month: '2026-11', Item: 'Eraser', Amount: 1 }),
    });
    expect(sold.status).toBe(201);
    const changed = await fetch(url, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain('5,Eraser,1\r\n,Total,43.5\r\n');
  });

  test('a month without sales is 204, a malformed one 400; writes are 405; the listing names it', async () => {
    expect((await fetch(`${example.origin}/Sales.Csv/Month=1999-01`)).status).toBe(204);
    const bad = await fetch(`${example.origin}/Sales.Csv/Month=November`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { ErrorCode: string }).ErrorCode).toBe('InvalidConditionValueType');
    const post = await fetch(`${example.origin}/Sales.Csv`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const listed = await fetch(`${example.origin}/Service.AvailableResource/Kind=BinaryResource`, {
      headers: { accept: 'application/json;raw=true' },
    });
    expect(await listed.json()).toMatchObject([{ Name: 'Sales.Csv', Kind: 'BinaryResource', Methods: ['GET', 'HEAD'] }]);
  });
});
