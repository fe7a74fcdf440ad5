// A binary resource beside an entity resource: the sales of a month as a CSV file, made
// on request from the Sales resource and streamed line by line (docs/binary-resources.md).
//   pnpm build && node examples/binary-report/server.mjs
//   curl -i 'http://127.0.0.1:3000/Sales.Csv/Month=2026-11'
//   curl -i -H 'If-None-Match: <the ETag it gave>' 'http://127.0.0.1:3000/Sales.Csv/Month=2026-11'   (304)
//   curl -X POST -H 'Content-Type: application/json' -d '{"Month":"2026-11","Item":"Pen","Amount":3}' http://127.0.0.1:3000/Sales
import { createService, MemoryStorage, ServiceError } from '@resourcery/core';
import { createServer } from '@resourcery/node';

const service = createService();

const sales = new MemoryStorage([
  { Id: 1, Month: '2026-10', Item: 'Notebook', Amount: 4 },
  { Id: 2, Month: '2026-11', Item: 'Pencil', Amount: 1.5 },
  { Id: 3, Month: '2026-11', Item: 'Fountain pen, "Deluxe"', Amount: 35 },
  { Id: 4, Month: '2026-11', Item: 'Ink', Amount: 6 },
]);
service.addResource({ name: 'Sales', key: 'Id', storage: sales });

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
const field = (value) => {
  const text = String(value ?? '');
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

service.addBinaryResource({
  name: 'Sales.Csv',
  description: 'The sales of one month as CSV: /Sales.Csv/Month=2026-11',
  contentType: 'text/csv; charset=utf-8',
  read: ({ params }) => {
    const month = params.Month;
    if (!month || !/^\d{4}-\d{2}$/.test(month))
      throw new ServiceError('InvalidConditionValueType', 'Name the month as Month=YYYY-MM, e.g. /Sales.Csv/Month=2026-11');
    const rows = sales.all().filter((s) => s.Month === month);
    if (rows.length === 0) return null; // 204: no sales that month
    async function* lines() {
      yield 'Id,Item,Amount\r\n';
      for (const s of rows) yield `${s.Id},${field(s.Item)},${s.Amount}\r\n`;
      const total = rows.reduce((sum, s) => sum + s.Amount, 0);
      yield `,Total,${total}\r\n`;
    }
    // The version changes when the month's sales do: clients revalidate with If-None-Match.
    return { body: lines(), version: `${month}.${rows.length}.${rows.map((s) => s.Id).join('-')}` };
  },
});

const server = createServer(service);
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`Reports are served at http://127.0.0.1:${server.address().port}/Sales.Csv/Month=2026-11`);
});

const stop = () => server.close(() => void service.close());
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
