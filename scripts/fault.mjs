#!/usr/bin/env node
// Fault script for the CLI's data file and its journal (docs/cli-durability.md):
//  1. kill -9 during a stream of acknowledged writes (most of them only in the journal
//     then), then check a restart serves every acknowledged write and a stop writes them
//     all into the file, leaving no journal and no temp file;
//  2. disk full on a tiny tmpfs (needs root and mount; skipped with a clear line otherwise):
//     failed writes answer a generic 500, are never served, never persisted later;
//  3. the --watch race (issue 24 item 3): writers POST while an editor saves copies of the
//     file it read a moment before (stale by the writes compacted meanwhile) for N seconds;
//     every acknowledged write must be served and, after a stop, in the file.
// Usage: node scripts/fault.mjs [--rounds N] [--writers N] [--watch-seconds N] [--writer-pause-ms N]
//   [--only kill,disk,watch] (needs `pnpm build` first; --watch-seconds 0 skips the race;
//   --writer-pause-ms makes each race writer wait up to N ms between POSTs, so that few
//   writes land between two compactions, as on a loaded machine)
import { spawn, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rename, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    writers: { type: 'string', default: '8' },
    'watch-seconds': { type: 'string', default: '10' },
    'writer-pause-ms': { type: 'string', default: '0' },
    only: { type: 'string', default: 'kill,disk,watch' },
  },
});
const ROUNDS = Number(values.rounds);
const WRITERS = Number(values.writers);
const WATCH_SECONDS = Number(values['watch-seconds']);
const WRITER_PAUSE_MS = Number(values['writer-pause-ms']);
const ONLY = new Set(values.only.split(','));
const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '../packages/cli/dist/cli.js');
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json;raw=true' };

function start(file, flags = []) {
  const child = spawn(process.execPath, [CLI, 'serve', file, '--port', '0', '-q', ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    let out = '';
    // Generous: under `nice -n 19` on a loaded machine a start took more than 15 s.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in 60 s: ${err}`));
    }, 60000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[0], stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}): ${err}`));
    });
  });
}

const stop = (child) =>
  new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGKILL');
  });

async function killDuringWrites(round, dir) {
  const file = path.join(dir, `kill-${round}.json`);
  await writeFile(file, JSON.stringify({ items: [] }));
  const { child, url } = await start(file);
  const acked = new Set();
  let killed = false;
  let next = 0;
  const writer = async () => {
    while (!killed) {
      const id = next++;
      try {
        const r = await fetch(`${url}/items`, {
          method: 'POST',
          headers: JSON_HEADERS,
          body: JSON.stringify({ id, pad: 'x'.repeat(200) }),
        });
        if (r.status === 201) acked.add(id);
        else await r.text();
      } catch {
        return;
      }
    }
  };
  const writers = Array.from({ length: WRITERS }, writer);
  await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700));
  killed = true;
  await stop(child);
  await Promise.allSettled(writers);
  const inFile = new Set(JSON.parse(await readFile(file, 'utf8')).items.map((e) => e.id));
  const journal = existsSync(`${file}.journal`);
  // The restart replays the journal; a stop (SIGTERM) writes everything into the file.
  const again = await start(file);
  const served = new Set((await (await fetch(`${again.url}/items`, { headers: JSON_HEADERS })).json()).map((e) => e.id));
  await new Promise((resolve) => {
    again.child.once('exit', resolve);
    again.child.kill('SIGTERM');
  });
  const saved = new Set(JSON.parse(await readFile(file, 'utf8')).items.map((e) => e.id));
  const lost = [...acked].filter((id) => !served.has(id));
  const leftovers = (await readdir(dir)).filter((n) => n.startsWith(`kill-${round}.json.`));
  const ok = lost.length === 0 && saved.size === served.size && [...served].every((id) => saved.has(id)) && leftovers.length === 0;
  console.log(
    `kill -9 round ${round + 1}: ${acked.size} acknowledged, ${inFile.size} in the file alone (journal ${journal ? 'present' : 'absent'}), ${lost.length} lost, restart serves ${served.size}, after stop the file holds ${saved.size}, leftover journal/temp files ${leftovers.length} -> ${ok ? 'ok' : 'FAIL'}`,
  );
  return ok;
}

async function diskFull(dir) {
  const mnt = path.join(dir, 'tiny');
  await mkdir(mnt);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mnt], { stdio: 'pipe' });
  } catch (e) {
    console.log(
      `disk full: skipped (cannot mount a tmpfs here: ${
        String(e.stderr || e.message)
          .trim()
          .split('\n')[0]
      })`,
    );
    return true;
  }
  try {
    const file = path.join(mnt, 'full.json');
    await writeFile(file, JSON.stringify({ items: [] }));
    const { child, url, stderr } = await start(file);
    const acked = [];
    let failure;
    for (let id = 0; id < 1000 && !failure; id++) {
      const r = await fetch(`${url}/items`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ id, pad: 'x'.repeat(2000) }) });
      const body = await r.json();
      if (r.status === 201) acked.push(id);
      else failure = { id, status: r.status, body };
    }
    const served = (await (await fetch(`${url}/items`, { headers: JSON_HEADERS })).json()).map((e) => e.id);
    // A small write after the failure: it may fit or fail, but the failed entity must never come back.
    const small = await fetch(`${url}/items`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ id: 'small' }) });
    await small.text();
    await stop(child);
    // A restart on the full disk replays the journal (writing it into the file may fail: it is then kept).
    const again = await start(file);
    const restarted = (await (await fetch(`${again.url}/items`, { headers: JSON_HEADERS })).json()).map((e) => e.id);
    await stop(again.child);
    const leaks = failure ? JSON.stringify(failure.body).includes(mnt) : false;
    const checks = {
      'a write failed with 500': failure?.status === 500,
      'its message names no path': !leaks,
      'the server logged the cause': /ENOSPC/.test(stderr()),
      'readers never saw it': !served.includes(failure?.id),
      'a restart never serves it': !restarted.includes(failure?.id),
      'a restart serves every acknowledged write': acked.every((id) => restarted.includes(id)),
    };
    const ok = Object.values(checks).every(Boolean);
    console.log(
      `disk full (512 KiB tmpfs): ${acked.length} acknowledged before ENOSPC; ${Object.entries(checks)
        .map(([k, v]) => `${k}: ${v ? 'yes' : 'NO'}`)
        .join('; ')} -> ${ok ? 'ok' : 'FAIL'}`,
    );
    return ok;
  } finally {
    execFileSync('umount', [mnt]);
  }
}

/**
 * The --watch race: WRITERS writers POST for `seconds` while an editor reads the file, waits
 * a little (writes land and are compacted meanwhile), changes one entity of its copy and
 * saves it (temp file renamed over the data file), again and again. Then one more write,
 * the served data, a stop (SIGTERM) and the file. Prints a table.
 */
async function watchRace(dir, seconds) {
  const file = path.join(dir, 'watch.json');
  await writeFile(file, JSON.stringify({ items: [{ id: 'edited', title: 'start' }] }));
  const { child, url, stderr } = await start(file, ['--watch']);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const acked = new Set();
  let failed = 0;
  let stop = false;
  let next = 0;
  const writer = async () => {
    while (!stop) {
      const id = next++;
      try {
        const r = await fetch(`${url}/items`, {
          method: 'POST',
          headers: JSON_HEADERS,
          body: JSON.stringify({ id, pad: 'x'.repeat(100) }),
        });
        await r.text();
        if (r.status === 201) acked.add(id);
        else failed++;
      } catch {
        failed++;
      }
      if (WRITER_PAUSE_MS > 0) await sleep(Math.random() * WRITER_PAUSE_MS);
    }
  };
  let saves = 0;
  const editor = async () => {
    while (!stop) {
      let copy;
      try {
        copy = JSON.parse(await readFile(file, 'utf8'));
      } catch {
        await sleep(20);
        continue;
      }
      // Stale by whatever is written and compacted while the editor "types".
      await sleep(50 + Math.random() * 250);
      const target = copy.items.find((e) => e.id === 'edited');
      if (target) target.title = `edit ${saves}`;
      await writeFile(`${file}.edit`, JSON.stringify(copy, null, 2));
      await rename(`${file}.edit`, file);
      saves++;
      await sleep(50 + Math.random() * 250);
    }
  };
  const started = Date.now();
  const running = [...Array.from({ length: WRITERS }, writer), editor()];
  await sleep(seconds * 1000);
  stop = true;
  await Promise.all(running);
  // Once the watcher has loaded the last save, a write makes the server check the file once more.
  await sleep(500);
  await (await fetch(`${url}/items`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ id: 'last' }) })).text();
  const served = new Set((await (await fetch(`${url}/items`, { headers: JSON_HEADERS })).json()).map((e) => e.id));
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
  const saved = new Set(JSON.parse(await readFile(file, 'utf8')).items.map((e) => e.id));
  const lostServed = [...acked].filter((id) => !served.has(id)).length;
  const lostSaved = [...acked].filter((id) => !saved.has(id)).length;
  const rejected = (await readdir(dir)).filter((n) => n.startsWith('watch.json.rejected-')).length;
  const merges = (stderr().match(/based on an older version/g) ?? []).length;
  const ok = lostServed === 0 && lostSaved === 0 && acked.size > 0;
  const rows = [
    ['seconds', ((Date.now() - started) / 1000).toFixed(1)],
    ['writers', WRITERS],
    ['writer pause (ms, at most)', WRITER_PAUSE_MS],
    ['acknowledged POSTs', acked.size],
    ['other answers (409 while an edit loads, errors)', failed],
    ['editor saves (each a stale copy)', saves],
    ['saves merged as older versions (logged)', merges],
    ['saves refused (moved aside as .rejected-*)', rejected],
    ['acknowledged, not served', lostServed],
    ['acknowledged, not in the file after a stop', lostSaved],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`--watch race (${WRITERS} writers and an editor saving stale copies):`);
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
  if (!ok) {
    console.log(`  lost: ${[...acked].filter((id) => !served.has(id) || !saved.has(id)).join(', ')}`);
    console.log(`  server log:\n${stderr().trim().split('\n').slice(-30).join('\n')}`);
  }
  console.log(`  -> ${ok ? 'ok' : 'FAIL'}`);
  return ok;
}

const dir = await mkdtemp(path.join(tmpdir(), 'resourcery-fault-'));
let ok = true;
try {
  if (ONLY.has('kill')) for (let round = 0; round < ROUNDS; round++) ok = (await killDuringWrites(round, dir)) && ok;
  if (ONLY.has('disk')) ok = (await diskFull(dir)) && ok;
  if (ONLY.has('watch') && WATCH_SECONDS > 0) ok = (await watchRace(dir, WATCH_SECONDS)) && ok;
} finally {
  await rm(dir, { recursive: true, force: true });
}
console.log(ok ? 'fault: all checks passed' : 'fault: FAILED');
process.exit(ok ? 0 : 1);
