import net from 'node:net';
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';
const service = createService({ events: false });
service.addResource({
  name: 'Person',
  storage: new MemoryStorage(Array.from({ length: 200 }, (_, i) => ({ Id: i, Name: 'x'.repeat(100) }))),
});
const server = createServer(service).listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const results = {};
  for (const size of [1e3, 1e5, 1e6, 5e6, 2e7]) {
    for (let r = 0; r < 20; r++) {
      const out = await new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        let got = Buffer.alloc(0);
        s.on('data', (d) => {
          got = Buffer.concat([got, d]);
          const t = got.toString('latin1');
          const h = t.indexOf('\r\n\r\n');
          const m = /content-length: (\d+)/i.exec(t);
          if (h > 0 && m && t.length - h - 4 >= Number(m[1])) finish('done');
        });
        let fin = false;
        const finish = (how) => {
          if (fin) return;
          fin = true;
          const text = got.toString('latin1');
          const head = text.indexOf('\r\n\r\n');
          const m = /content-length: (\d+)/i.exec(text);
          const chunkedEnd = text.endsWith('0\r\n\r\n');
          const complete = m ? text.length - head - 4 >= Number(m[1]) : chunkedEnd;
          s.destroy();
          resolve(
            `${how} status ${text.slice(9, 12)} ${complete ? 'complete' : 'CUT ' + (text.length - head - 4) + '/' + (m?.[1] ?? 'chunked')}`,
          );
        };
        s.on('error', (e) => finish('error ' + e.code));
        s.on('end', () => finish('end'));
        s.on('close', () => finish('close'));
        const body = Buffer.alloc(size, 'a');
        s.write(`GET /Person HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
        s.write(body, () => {});
        s.on('error', () => {});
      });
      results[`${size} ${out}`] = (results[`${size} ${out}`] ?? 0) + 1;
    }
  }
  console.log(results);
  server.close();
});
