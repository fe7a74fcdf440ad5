// Deterministic test data: the same seed gives the same entities on every machine, so
// runs are comparable and the library and its baselines always see identical input.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'results');

const FIRST = [
  'Ada',
  'Alan',
  'Grace',
  'Edsger',
  'Barbara',
  'Donald',
  'Margaret',
  'Ken',
  'Dennis',
  'Frances',
  'John',
  'Radia',
  'Tim',
  'Linus',
  'Anita',
  'Niklaus',
];
const LAST = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Ritchie',
  'Allen',
  'Backus',
  'Perlman',
  'Berners-Lee',
  'Torvalds',
  'Borg',
  'Wirth',
];
const CITIES = ['Stockholm', 'London', 'New York', 'Zürich', 'Eindhoven', 'Palo Alto', 'Boston', 'Helsinki'];

/** mulberry32: a tiny seeded PRNG (uniform in [0, 1)). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` Person entities: Age uniform in 18..90 (about 83 % are over 30), Email null
 * for about one in eight, many ties on Age so that stable ordering matters.
 */
export function people(count, seed = 42) {
  const rnd = prng(seed);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    out[i] = {
      id: i + 1,
      Name: `${first} ${last}`,
      Age: 18 + Math.floor(rnd() * 73),
      Email: rnd() < 0.125 ? null : `${first}.${last}${i}@example.org`.toLowerCase(),
      City: pick(CITIES),
      Active: rnd() < 0.7,
    };
  }
  return out;
}

/** Writes `{ "Person": people(count) }` to bench/results/<name> and returns its path. */
export function writeDataFile(name, count, seed = 42) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, name);
  writeFileSync(file, `${JSON.stringify({ Person: people(count, seed) }, null, 2)}\n`);
  return file;
}
