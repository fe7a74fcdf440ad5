// How long can a request wait behind a compaction of the CLI's journal (issue 15 item 3)?
// In process, with the built @resourcery/cli: a file of N entities, one write (so the
// journal holds something), then the event loop's delay is sampled (perf_hooks
// monitorEventLoopDelay, 1 ms resolution) while `store.compact()` writes the file, and,
// for comparison, while the process does nothing for as long. A request arriving at any
// moment waits at most about the worst delay.
//   pnpm build && node bench/cli-compaction.mjs [--sizes=100000,1000000]
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const SIZES = arg('sizes', '100000,1000000').split(',').map(Number);
const { createFileService } = await import(path.join(path.dirname(fileURLToPath(import.meta.url)), '../packages/cli/dist/index.js'));

async function sample(run) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t = performance.now();
  await run();
  const ms = performance.now() - t;
  h.disable();
  return { ms, p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
}

const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-compaction-'));
try {
  console.log('| entities | compaction ms | event-loop delay p99 / max ms during it | idle for as long: p99 / max ms |');
  console.log('|---:|---:|---:|---:|');
  for (const size of SIZES) {
    const file = path.join(dir, `data-${size}.json`);
    await writeFile(
      file,
      JSON.stringify({ items: Array.from({ length: size }, (_, i) => ({ id: i, name: `item ${i}`, price: i % 1000 })) }),
    );
    const { service, store } = await createFileService({
      file,
      apiKeys: [],
      allowPrivateDestinations: false,
      compaction: { bytes: 2 ** 40, idleMs: 2 ** 30, maxAgeMs: 2 ** 30 },
    });
    const r = await service.handle({
      method: 'POST',
      uri: '/items',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"new"}',
    });
    if (r.status !== 201) throw new Error(`POST answered ${r.status}`);
    const during = await sample(() => store.compact());
    const idle = await sample(() => new Promise((resolve) => setTimeout(resolve, during.ms)));
    console.log(
      `| ${size.toLocaleString('en')} | ${during.ms.toFixed(0)} | ${during.p99.toFixed(1)} / ${during.max.toFixed(1)} | ${idle.p99.toFixed(1)} / ${idle.max.toFixed(1)} |`,
    );
    await store.close();
    await service.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
