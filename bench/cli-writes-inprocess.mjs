// CLI POSTs without HTTP (issue 30): the built CLI's file store and service in this process,
// concurrent writers calling service.handle, so that keyed and generated POSTs compare by
// the CPU the store and the core spend on each (process.cpuUsage after a warm-up of as many
// POSTs), not by a client's or the machine's share of the run.
//   pnpm build && node bench/cli-writes-inprocess.mjs [--size=1000] [--key=id|generated] [--posts=4000] [--writers=8]
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileService } from '../packages/cli/dist/index.js';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const size = Number(arg('size', '1000'));
const mode = arg('key', 'id');
const posts = Number(arg('posts', '4000'));
const writers = Number(arg('writers', '8'));
const headers = { 'content-type': 'application/json', accept: 'application/json;raw=true' };

const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-cli-writes-inprocess-'));
const file = path.join(dir, 'data.json');
await writeFile(file, JSON.stringify({ items: Array.from({ length: size }, (_, i) => ({ id: i, name: `item ${i}`, price: i % 1000 })) }));
const { service, store } = await createFileService({ file, apiKeys: [], allowPrivateDestinations: false });
try {
  let next = size;
  /** `count` POSTs from concurrent writers. */
  const run = async (count) => {
    let sent = 0;
    const writer = async () => {
      while (sent < count) {
        sent++;
        const body = mode === 'id' ? { id: next++, name: 'new', price: 1 } : { name: 'new', price: 1 };
        const r = await service.handle({ method: 'POST', uri: '/items', headers, body: JSON.stringify(body) });
        if (r.status !== 201) throw new Error(`POST answered ${r.status}`);
      }
    };
    await Promise.all(Array.from({ length: writers }, writer));
  };
  await run(posts);
  const load = os.loadavg()[0];
  const compactions = store.compactions;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(posts);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `${size.toLocaleString('en')} entities, ${mode === 'id' ? 'keyed' : 'generated keys'}, ${writers} writers, ${posts} POSTs after ${posts} to warm up: ` +
      `${((cpu.user + cpu.system) / posts).toFixed(0)} µs of CPU per POST, ${(posts / elapsed).toFixed(0)} writes/s, ` +
      `${store.compactions - compactions} compactions; load average ${load.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)}`,
  );
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
