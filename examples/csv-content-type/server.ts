// A service that speaks CSV next to JSON, Excel and JSON Lines (see csv.ts).
//   pnpm build
//   cd examples && npx tsup csv-content-type/server.ts --format esm -d csv-content-type/dist
//   node csv-content-type/dist/server.js
//   curl -H 'Accept: text/csv' http://127.0.0.1:3000/Book
//   curl -X POST -H 'Content-Type: text/csv' --data-binary $'Title,Year\r\nDune,1965\r\n' http://127.0.0.1:3000/Book
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';
import { csv } from './csv';

const service = createService({ protocols: [{ name: 'CSV', identifier: 'csv', contentTypes: [csv] }] });

service.addResource({
  name: 'Book',
  description: 'Books and when they came out',
  storage: new MemoryStorage([
    { Title: 'The Left Hand of Darkness', Year: 1969, Tags: ['winter', 'politics'] },
    { Title: 'Solaris', Year: 1961, Tags: ['ocean'] },
  ]),
});

const server = createServer(service);
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address();
  console.log(`Books are served as CSV at http://127.0.0.1:${typeof address === 'object' && address ? address.port : ''}/Book`);
});

const stop = () => server.close(() => void service.close());
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
