// Cached parse + macro rewrite per request (DESIGN 10: < 5 µs on a cache hit), measured
// through the service's public members: `parseUri` and `service.macros.rewrite`, the two
// calls the pipeline makes for `/$name/...` before it resolves the resource.
//   node bench/macro.mjs [--quick] [--json]
import { createService, MemoryStorage } from '@resourcery/core';
import { parseUri } from '@resourcery/core/storage';
import { people } from './lib/data.mjs';
import { alternate, flags, fmt, median, table, timeLoop, timeLoopAsync } from './lib/stats.mjs';

const CALL = '/$adults/Email!=null/select=Name,Age';
const DIRECT = '/Person/Age>30&Email!=null/order_desc=Age&limit=10&select=Name,Age';

export async function run({ quick = false } = {}) {
  const service = createService();
  service.addResource({ name: 'Person', storage: new MemoryStorage(people(20)) });
  const created = await service.handle({
    method: 'POST',
    uri: '/Service.Admin.Macro',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ Name: 'adults', Uri: '/Person/Age>30/order_desc=Age&limit=10' }),
  });
  if (created.status !== 201) throw new Error(`macro bench: creating the macro answered ${created.status}: ${created.body}`);

  // The macro call must mean the same request as the direct URI.
  const [viaMacro, direct] = await Promise.all(
    [CALL, DIRECT].map((uri) => service.handle({ method: 'GET', uri, headers: { accept: 'application/json;raw=true' } })),
  );
  if (viaMacro.status !== 200 || viaMacro.body !== direct.body)
    throw new Error(`macro bench: ${CALL} and ${DIRECT} differ:\n${viaMacro.body}\n${direct.body}`);

  // What the rewrite reads of the request context: its URI, headers and body.
  const ctx = { uri: CALL, headers: {}, body: async () => null, replaceBody() {} };
  const parseHit = () => parseUri(CALL);
  const rewriteHit = () => service.macros.rewrite(parseUri(CALL), ctx);
  const parsed = parseUri(CALL);
  const rewriteOnly = () => service.macros.rewrite(parsed, ctx);
  const handleMacro = () => service.handle({ method: 'GET', uri: CALL });
  const handleDirect = () => service.handle({ method: 'GET', uri: DIRECT });

  const ms = quick ? 150 : 300;
  const rounds = quick ? 5 : 7;
  const us = await alternate(
    {
      parse: (w) => timeLoop(parseHit, w ?? ms),
      rewrite: (w) => timeLoopAsync(rewriteOnly, w ?? ms),
      parseAndRewrite: (w) => timeLoopAsync(rewriteHit, w ?? ms),
      handleMacro: (w) => timeLoopAsync(handleMacro, w ?? ms),
      handleDirect: (w) => timeLoopAsync(handleDirect, w ?? ms),
    },
    { rounds, warmup: quick ? 400 : 800 },
  );
  const m = Object.fromEntries(Object.entries(us).map(([k, v]) => [k, median(v)]));
  return { call: CALL, direct: DIRECT, rounds, us: m, raw: us };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = flags();
  const r = await run(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
  else {
    console.log(`macro 'adults' = /Person/Age>30/order_desc=Age&limit=10, called as ${r.call}; median of ${r.rounds} rounds`);
    console.log(
      table(
        ['step (cache hit)', 'µs per request'],
        [
          ['parseUri', fmt(r.us.parse)],
          ['macros.rewrite', fmt(r.us.rewrite)],
          ['parseUri + macros.rewrite', fmt(r.us.parseAndRewrite)],
          ['service.handle GET via the macro (20 entities)', fmt(r.us.handleMacro)],
          ['service.handle GET of the same URI written out', fmt(r.us.handleDirect)],
        ],
      ),
    );
  }
}
