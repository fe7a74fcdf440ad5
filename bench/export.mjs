// Export of many entities as JSON Lines and as Excel through the node adapter (DESIGN 10):
// time to the last byte over a real socket and the server's peak memory, next to
// hand-written node:http servers doing the same work (exceljs writing the same rows
// straight into the response; JSON Lines written by hand in the same chunks).
//   pnpm build && node bench/export.mjs [--quick] [--json] [--count=100000] [--rounds=5] [--cases=jsonl,jsonl-hand]
// Every case runs its server in a child process of its own, so its RSS is its own; the
// client (this process) reads and discards the body.
import { fork } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import { Readable, Transform } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { people } from './lib/data.mjs';
import { flags, fmt, median, table } from './lib/stats.mjs';

const EXCEL = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const COLUMNS = ['id', 'Name', 'Age', 'Email', 'City', 'Active'];

/** What each case's server does for `GET /Person` (and `GET /Person/_/limit=n` as warm-up). */
const CASES = {
  jsonl: { what: 'JSON Lines, Resourcery', accept: 'application/jsonlines', serve: serveLibrary },
  'jsonl-hand': { what: 'JSON Lines, hand-written node:http', accept: 'application/jsonlines', serve: serveHandJsonLines },
  excel: { what: 'Excel, Resourcery', accept: EXCEL, serve: serveLibrary },
  'excel-hand': { what: 'Excel, exceljs alone into node:http', accept: EXCEL, serve: serveHandExcel },
  json: { what: 'JSON envelope, Resourcery (built in memory)', accept: 'application/json', serve: serveLibrary },
};

// ---- servers (child processes) -------------------------------------------------------

async function serveLibrary(entities) {
  const { createService, MemoryStorage } = await import('@resourcery/core');
  const { createServer } = await import('@resourcery/node');
  const service = createService({ events: false });
  service.addResource({ name: 'Person', storage: new MemoryStorage(entities) });
  return createServer(service);
}

function pageOf(entities, url) {
  const limit = /limit=(\d+)/.exec(url)?.[1];
  return limit ? entities.slice(0, Number(limit)) : entities;
}

async function serveHandJsonLines(entities) {
  return http.createServer(async (req, res) => {
    res.writeHead(200, { 'content-type': 'application/jsonlines' });
    let chunk = '';
    for (const e of pageOf(entities, req.url)) {
      chunk += `${JSON.stringify(e)}\n`;
      if (chunk.length >= 64 * 1024) {
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
        chunk = '';
      }
    }
    res.end(chunk);
  });
}

async function serveHandExcel(entities) {
  const { default: ExcelJS } = await import('exceljs');
  return http.createServer(async (req, res) => {
    res.writeHead(200, { 'content-type': EXCEL });
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: res, useStyles: false, useSharedStrings: false });
    const sheet = workbook.addWorksheet('Data');
    sheet.addRow(COLUMNS).commit();
    for (const e of pageOf(entities, req.url)) sheet.addRow(COLUMNS.map((c) => e[c] ?? undefined)).commit();
    sheet.commit();
    await workbook.commit();
  });
}

async function child(name, count) {
  const server = await CASES[name].serve(people(count));
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (message) => {
    globalThis.gc?.();
    const { user, system } = process.cpuUsage();
    const cpuMs = (user + system) / 1000;
    if (message === 'baseline') process.send({ rss: process.memoryUsage().rss, cpuMs });
    if (message === 'peak') process.send({ rss: process.resourceUsage().maxRSS * 1024, cpuMs });
  });
}

// ---- client (this process) ------------------------------------------------------------

function get(port, path, accept) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http
      .get({ host: '127.0.0.1', port, path, headers: { accept } }, (res) => {
        let bytes = 0;
        res.on('data', (chunk) => {
          bytes += chunk.length;
        });
        res.on('end', () =>
          res.statusCode === 200 ? resolve({ ms: performance.now() - started, bytes }) : reject(new Error(`status ${res.statusCode}`)),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

function ask(proc, message) {
  return new Promise((resolve) => {
    proc.once('message', resolve);
    if (message) proc.send(message);
  });
}

/** One round of one case: a fresh server process, a warm-up request, then the timed GET. */
async function measure(name, count) {
  const proc = fork(fileURLToPath(import.meta.url), [`--serve=${name}`, `--count=${count}`], { execArgv: ['--expose-gc'] });
  try {
    const { port } = await ask(proc);
    const { accept } = CASES[name];
    await get(port, '/Person/_/limit=2000', accept); // loads exceljs, warms the JIT
    const { rss: baseline, cpuMs: cpuBefore } = await ask(proc, 'baseline');
    const { ms, bytes } = await get(port, '/Person', accept);
    const { rss: peak, cpuMs: cpuAfter } = await ask(proc, 'peak');
    // The server's CPU for the export (its gc() calls around it included alike on both sides).
    return { ms, bytes, baselineMb: baseline / 2 ** 20, peakMb: peak / 2 ** 20, cpuMs: cpuAfter - cpuBefore };
  } finally {
    proc.kill();
  }
}

/**
 * The `ndjson` package is not installed; its `stringify()` is an object-mode through2
 * Transform writing `stringify(entity) + os.EOL` per entity (json-stringify-safe, which is
 * slower than JSON.stringify). The same Transform with JSON.stringify stands in for it,
 * in process, against our writer (lines batched into ~64 KiB chunks).
 */
async function lineWriters(count, rounds) {
  const { jsonLines } = await import('@resourcery/core');
  const entities = people(count);
  const drain = async (iterable) => {
    const started = performance.now();
    let chunks = 0;
    for await (const chunk of iterable) chunks += chunk.length > 0 ? 1 : 0;
    return { ms: performance.now() - started, chunks };
  };
  const ours = () => drain(jsonLines.write({ kind: 'entities', entities }, { params: {}, elapsedMs: () => 0 }));
  const perEntity = () =>
    drain(
      Readable.from(entities).pipe(
        new Transform({ writableObjectMode: true, transform: (entity, _, cb) => cb(null, `${JSON.stringify(entity)}\n`) }),
      ),
    );
  const runs = { ours: [], perEntity: [] };
  await ours();
  await perEntity();
  for (let r = 0; r < Math.max(rounds, 3); r++) {
    runs.ours.push(await ours());
    runs.perEntity.push(await perEntity());
  }
  return {
    oursMs: median(runs.ours.map((x) => x.ms)),
    oursChunks: runs.ours[0].chunks,
    perEntityMs: median(runs.perEntity.map((x) => x.ms)),
    perEntityChunks: runs.perEntity[0].chunks,
  };
}

async function main() {
  const opts = flags();
  const count = Number(process.argv.find((a) => a.startsWith('--count='))?.slice(8) ?? 100_000);
  const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? (opts.quick ? 1 : 5));
  const only = process.argv
    .find((a) => a.startsWith('--cases='))
    ?.slice(8)
    .split(',');
  const names = Object.keys(CASES).filter((n) => !only || only.includes(n));
  const loadStart = os.loadavg()[0].toFixed(2);
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  // Rounds alternate the order of the cases, so drift (other load, heat) falls on all alike.
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) {
      process.stderr.write(`round ${r + 1}/${rounds}: ${CASES[name].what}...\n`);
      runs[name].push(await measure(name, count));
    }
  }
  const results = Object.fromEntries(
    names.map((n) => {
      const of = (key) => median(runs[n].map((run) => run[key]));
      return [n, { ms: of('ms'), cpuMs: of('cpuMs'), bytes: runs[n][0].bytes, baselineMb: of('baselineMb'), peakMb: of('peakMb') }];
    }),
  );
  const load = `${loadStart} -> ${os.loadavg()[0].toFixed(2)}`;
  const ratio = (a, b, key = 'ms') => (results[a] && results[b] ? results[a][key] / results[b][key] : null);
  const excelRatio = ratio('excel', 'excel-hand');
  const jsonlRatio = ratio('jsonl', 'jsonl-hand');
  const jsonlCpuRatio = ratio('jsonl', 'jsonl-hand', 'cpuMs');
  // Each round's own ratio (the two sides ran back to back), so a spread shows beside the median.
  const jsonlRounds = results.jsonl && results['jsonl-hand'] ? runs.jsonl.map((r, i) => r.ms / runs['jsonl-hand'][i].ms) : [];
  if (opts.json) {
    console.log(JSON.stringify({ count, rounds, load, results, excelRatio, jsonlRatio, jsonlCpuRatio, jsonlRounds }));
    return;
  }
  process.stderr.write('JSON Lines writers in process...\n');
  const writers = await lineWriters(count, rounds);
  const row = (name) => {
    const r = results[name];
    return [
      CASES[name].what,
      fmt(r.ms),
      fmt(r.cpuMs),
      fmt(r.bytes / 2 ** 20),
      fmt(r.baselineMb),
      fmt(r.peakMb),
      fmt(r.peakMb - r.baselineMb),
    ];
  };
  console.log(
    `GET /Person, ${count.toLocaleString('en-US')} entities; medians of ${rounds} rounds; memory of the server process; load ${load}`,
  );
  console.log(table(['case', 'ms', 'server CPU ms', 'body MiB', 'RSS before MiB', 'peak RSS MiB', 'growth MiB'], names.map(row)));
  if (excelRatio !== null) console.log(`\nExcel: Resourcery / exceljs alone = ${excelRatio.toFixed(2)}x time (target <= 1.2x)`);
  if (jsonlRatio !== null)
    console.log(
      `JSON Lines: Resourcery / hand-written = ${jsonlRatio.toFixed(2)}x time (goal <= 1.1x; rounds ${jsonlRounds.map((r) => r.toFixed(2)).join(', ')}), ${jsonlCpuRatio.toFixed(2)}x server CPU`,
    );
  console.log(`\nJSON Lines writers, in process, ${count.toLocaleString('en-US')} entities:`);
  console.log(
    table(
      ['writer', 'ms', 'chunks'],
      [
        ['Resourcery (lines batched into ~64 KiB chunks)', fmt(writers.oursMs), writers.oursChunks],
        ['object-mode Transform per entity (as ndjson.stringify)', fmt(writers.perEntityMs), writers.perEntityChunks],
      ],
    ),
  );
}

const serve = process.argv.find((a) => a.startsWith('--serve='));
if (serve) await child(serve.slice(8), Number(process.argv.find((a) => a.startsWith('--count=')).slice(8)));
else await main();
