import { MemoryStorage, Service } from '@resourcery/core';
import { bodyText, PEOPLE, PERSON_SCHEMA } from './handle-support';
import { FUZZ_MAX_ENTITIES, Random, request, type FuzzRequest } from './fuzz/grammar';

/**
 * The fuzz harness: grammar-aware requests (fuzz/grammar.ts) straight into `handle`.
 * CI runs a bounded short run; a long run with progress (scripts/fuzz.mjs):
 *   pnpm fuzz --requests 1000000 --seed 7
 * Every request must answer below 500, within HANG_MS; every 4xx but 401 carries the error
 * body and its ErrorInfo link; nothing may escape `handle`; no prototype gets polluted.
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 20_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
/** Progress on stderr every this many requests (0: none). */
const PROGRESS = Number(process.env.FUZZ_PROGRESS ?? 0);
/** A request (its answer and the whole body) taking longer than this is a hang. */
const HANG_MS = Number(process.env.FUZZ_HANG_MS ?? 30_000);
/** A fresh service now and then keeps stored garbage (and the time to list it) bounded. */
const REQUESTS_PER_SERVICE = 500;

function freshService(): Service {
  const service = new Service({ maxErrorRecords: 200, maxEntities: FUZZ_MAX_ENTITIES });
  service.addResource({ name: 'Person', schema: PERSON_SCHEMA, storage: new MemoryStorage(PEOPLE.map((p) => ({ ...p }))) });
  service.addResource({ name: 'Order', storage: new MemoryStorage([{ Id: 1, Total: 10, Lines: [{ Sku: 'a' }] }]) });
  return service;
}

/** What is wrong with the answer to one request, or null; a request not answered in full within HANG_MS is a hang. */
async function check(service: Service, req: FuzzRequest): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`hang: no full answer within ${HANG_MS} ms`), HANG_MS);
  });
  try {
    return await Promise.race([answer(service, req), hang]);
  } finally {
    clearTimeout(timer);
  }
}

async function answer(service: Service, req: FuzzRequest): Promise<string | null> {
  let status: number;
  let headers: Record<string, string>;
  let text: string;
  try {
    const res = await service.handle({ method: req.method, uri: req.uri, headers: req.headers, body: req.body });
    status = res.status;
    headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
    text = await bodyText(res.body);
  } catch (e) {
    return `escaped handle: ${(e as Error).stack ?? e}`;
  }
  if (status >= 500) return `${status}: ${text.slice(0, 300)}`;
  if (status < 400 || status === 401) return null;
  if (headers.errorinfo === undefined) return `${status} without ErrorInfo`;
  if (req.method.toUpperCase() === 'HEAD') return null;
  try {
    const error = JSON.parse(text);
    if (typeof error.ErrorCode !== 'string' || typeof error.Message !== 'string')
      return `${status} body without ErrorCode/Message: ${text.slice(0, 200)}`;
  } catch {
    return `${status} body is not the JSON error body: ${text.slice(0, 200)}`;
  }
  return null;
}

test(
  `fuzz: ${REQUESTS} grammar-aware requests (seed ${SEED}) answer without 5xx, with error bodies and ErrorInfo`,
  async () => {
    const random = new Random(SEED);
    const failures: string[] = [];
    let service = freshService();
    for (let i = 0; i < REQUESTS && failures.length < 10; i++) {
      if (i > 0 && i % REQUESTS_PER_SERVICE === 0) {
        await service.close?.();
        service = freshService();
      }
      const req = request(random);
      const problem = await check(service, req);
      if (PROGRESS > 0 && (i + 1) % PROGRESS === 0)
        process.stderr.write(`fuzz: ${i + 1} of ${REQUESTS} requests, ${failures.length + (problem === null ? 0 : 1)} failing\n`);
      if (problem !== null)
        failures.push(
          `#${i} ${req.method} ${req.uri.slice(0, 200)} ${JSON.stringify(req.headers)} body ${String(req.body).slice(0, 120)}\n  -> ${problem}`,
        );
    }
    await service.close?.();
    expect(failures).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  },
  Math.max(120_000, REQUESTS * 20),
);
