// Bare node:http doing by hand what GET /Person/Age>30&Email!=null/order_desc=Age&limit=10&select=Name,Age
// does, with the same bytes (the envelope, TimeElapsedMs measured the same way).
//   node servers/node-bare.mjs <data.json> [--top-k]
import { readFileSync } from 'node:fs';
import http from 'node:http';

const { Person } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const topK = process.argv.includes('--top-k');
const PATH = '/Person/Age>30&Email!=null/order_desc=Age&limit=10&select=Name,Age';

/** The obvious code: filter, stable sort, slice, map. */
function naive() {
  return Person.filter((p) => p.Age > 30 && p.Email != null)
    .sort((a, b) => b.Age - a.Age)
    .slice(0, 10)
    .map((p) => ({ Name: p.Name, Age: p.Age }));
}

/** Hand-tuned: one pass keeping the best 10 (ties keep data order), no full sort. */
function best() {
  const top = [];
  for (let i = 0; i < Person.length; i++) {
    const p = Person[i];
    if (!(p.Age > 30 && p.Email != null)) continue;
    if (top.length === 10 && p.Age <= top[9].Age) continue;
    let j = top.length;
    while (j > 0 && top[j - 1].Age < p.Age) j--;
    top.splice(j, 0, p);
    if (top.length > 10) top.pop();
  }
  return top.map((p) => ({ Name: p.Name, Age: p.Age }));
}

const select = topK ? best : naive;
const server = http.createServer((req, res) => {
  const started = performance.now();
  if (req.method !== 'GET' || req.url !== PATH) {
    res.writeHead(404).end();
    return;
  }
  const data = select();
  const elapsed = Math.round((performance.now() - started) * 1000) / 1000;
  const body = `{"Status":"success","Data":${JSON.stringify(data)},"DataCount":${data.length},"TimeElapsedMs":${elapsed}}`;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log(`bare node:http at http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => process.exit(0));
