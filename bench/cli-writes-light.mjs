// CLI POSTs with a lighter client than bench/cli-writes.mjs (issue 30): no reader, and the
// writers spread over several client processes, so that the figure is the server's rather
// than one client process's. Serves a file of N entities with the built CLI, POSTs for a
// few seconds, prints writes/s, writes per server CPU-second and the server's share of a core.
//   pnpm build && node bench/cli-writes-light.mjs [--size=1000000] [--key=id|generated] [--seconds=4]
//     [--writers=8] [--processes=1] [--cli=path/to/cli.js] [--strace]
// --writers is per process. --strace attaches `strace -f -c` to the server for the writes and
// prints its counts of fdatasync (journal appends), fsync and rename (compactions: the data
// file's, and the journal's when writes came during one); strace makes the server slower.
import { fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;

if (process.argv[2] === 'client') {
  // One client process: its writers POST until the time is up, then it reports how many were acknowledged.
  const [url, mode, seconds, writers, first] = process.argv.slice(3);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(writers) });
  const headers = { 'content-type': 'application/json', accept: 'application/json;raw=true' };
  const post = (body) =>
    new Promise((resolve, reject) => {
      const req = http.request(`${url}/items`, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode));
      });
      req.once('error', reject);
      req.end(body);
    });
  let next = Number(first);
  let writes = 0;
  const end = Date.now() + Number(seconds) * 1000;
  const writer = async () => {
    while (Date.now() < end) {
      const body = mode === 'id' ? { id: next++, name: 'new', price: 1 } : { name: 'new', price: 1 };
      const status = await post(JSON.stringify(body));
      if (status !== 201) throw new Error(`POST answered ${status}`);
      writes++;
    }
  };
  await Promise.all(Array.from({ length: Number(writers) }, writer));
  agent.destroy();
  process.send(writes, () => process.exit(0));
} else {
  const size = Number(arg('size', '1000000'));
  const mode = arg('key', 'id');
  const seconds = Number(arg('seconds', '4'));
  const writers = Number(arg('writers', '8'));
  const processes = Number(arg('processes', '1'));
  const cli = path.resolve(arg('cli', path.join(path.dirname(fileURLToPath(import.meta.url)), '../packages/cli/dist/cli.js')));
  const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-cli-writes-light-'));
  const file = path.join(dir, 'data.json');
  await writeFile(file, JSON.stringify({ items: Array.from({ length: size }, (_, i) => ({ id: i, name: `item ${i}`, price: i % 1000 })) }));
  const server = spawn(process.execPath, [cli, 'serve', file, '--port', '0', '-q'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      server.stdout.on('data', (d) => {
        out += d;
        const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
        if (m) resolve(m[0]);
      });
      server.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    const cpu = () => {
      const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    };
    const load = os.loadavg()[0];
    const traced = process.argv.includes('--strace') ? path.join(dir, 'strace.txt') : null;
    const strace = traced
      ? spawn('strace', ['-f', '-c', '-o', traced, '-e', 'trace=fdatasync,fsync,rename', '-p', String(server.pid)], { stdio: 'ignore' })
      : null;
    if (strace) await new Promise((resolve) => setTimeout(resolve, 500));
    const cpu0 = cpu();
    const t0 = performance.now();
    const counts = await Promise.all(
      Array.from({ length: processes }, (_, i) => {
        // Each process its own range of ids, far from the stored ones and each other's.
        const args = ['client', url, mode, String(seconds), String(writers), String(size + i * 10_000_000)];
        const client = fork(fileURLToPath(import.meta.url), args);
        return new Promise((resolve, reject) => {
          client.once('message', resolve);
          client.once('exit', (code) => code !== 0 && reject(new Error(`client exited (${code})`)));
        });
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const serverCpu = cpu() - cpu0;
    const writes = counts.reduce((a, b) => a + b, 0);
    let calls = '';
    if (strace) {
      strace.kill('SIGINT');
      await new Promise((resolve) => strace.once('exit', resolve));
      const counted = {};
      for (const line of readFileSync(traced, 'utf8').split('\n')) {
        // % time, seconds, usecs/call, calls, [errors], syscall
        const fields = line.trim().split(/\s+/);
        if (/^(fdatasync|fsync|rename)$/.test(fields.at(-1))) counted[fields.at(-1)] = Number(fields[3]);
      }
      calls = `; strace: ${['fdatasync', 'fsync', 'rename'].map((c) => `${counted[c] ?? 0} ${c}`).join(', ')}`;
    }
    console.log(
      `${size.toLocaleString('en')} entities, ${mode === 'id' ? 'keyed' : 'generated keys'}, ${processes} x ${writers} writers, ${seconds} s: ` +
        `${(writes / elapsed).toFixed(1)} writes/s, ${(writes / serverCpu).toFixed(0)} per server CPU-s, server ${(serverCpu / elapsed).toFixed(2)} of a core; ` +
        `load average ${load.toFixed(2)} -> ${os.loadavg()[0].toFixed(2)}${calls}`,
    );
  } finally {
    server.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}
