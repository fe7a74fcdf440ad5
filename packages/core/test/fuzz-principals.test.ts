import { createService, MemoryStorage, type Service } from '@resourcery/core';
import { bodyText } from './handle-support';
import { Random } from './fuzz/grammar';
import { Receiver } from './webhook-receiver';

/**
 * Fuzzed sequences across principals (docs/security.md): mallory, an ordinary caller whom
 * the app lets write macros and webhooks, saves random macros and webhooks (any Uri,
 * headers that redirect or impersonate, local and remote Destinations, custom payloads,
 * PATCHes of ann's webhook) and calls them, while ann stores secrets, saves her own webhook
 * and calls mallory's macros. Whatever the sequence, no byte of ann's secrets (nor her session,
 * which mallory never knows) may reach
 * mallory: not in an answer to her, not at her receiver, not in a resource she can read.
 * A long run: FUZZ_SEQUENCES=2000 FUZZ_SEED=9 pnpm jest packages/core/test/fuzz-principals.test.ts
 */
const SEQUENCES = Number(process.env.FUZZ_SEQUENCES ?? 120);
const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
const STEPS = 16;
const SECRET = 'ANNSECRET';
const SESSIONS: Record<string, string> = { 's-ann': 'ann', 's-mallory': 'mallory' };

function clinic(): Service {
  const service = createService({
    authenticate: (request) => {
      const user = SESSIONS[request.headers['x-session'] ?? ''];
      if (user === undefined) throw new Error('no session');
      return { id: user };
    },
    // The app lets every caller write macros and webhooks: the rights they act with must still be the caller's.
    admin: { resources: { 'Service.Admin.Macro': { allow: () => true }, 'Service.Admin.Webhook': { allow: () => true } } },
    allowPrivateDestinations: true,
    webhooks: { retrySchedule: [0] },
  });
  service.addResource({
    name: 'Note',
    key: 'Id',
    storage: new MemoryStorage([
      { Id: 1, Owner: 'ann', Text: `${SECRET} diary` },
      { Id: 2, Owner: 'mallory', Text: 'shopping list' },
    ]),
    rules: { rows: (caller) => `Owner=${caller.principal.id}` },
  });
  service.addResource({
    name: 'Vault',
    storage: new MemoryStorage([{ Code: `${SECRET} 1234` }]),
    rules: { allow: (caller) => caller.principal.id === 'ann' },
  });
  // Open to everyone: where stolen data would land.
  service.addResource({ name: 'Loot', storage: new MemoryStorage() });
  return service;
}

const URIS = ['/Note', '/Note/Owner=ann', '/Vault', '/Loot', '/Note/_/select=Text', '/$m0', '/$m1', '/Note/1', '/Vault/_/limit=1'];
const HEADERS: Array<Record<string, string>> = [
  {},
  { Destination: 'PUT /Loot' },
  { Source: 'GET /Vault' },
  { 'X-Session': 's-mallory' },
  { Accept: 'application/json' },
  { Destination: 'POST /Loot', Source: 'GET /Note/Owner=ann' },
];

interface Sinks {
  /** Everything mallory saw. */
  seen: string[];
}

async function act(
  service: Service,
  user: string,
  method: string,
  uri: string,
  body: unknown,
  headers: Record<string, string>,
  sinks: Sinks,
) {
  const res = await service.handle({
    method,
    uri,
    headers: { 'content-type': 'application/json', ...headers, 'x-session': `s-${user}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await bodyText(res.body);
  if (res.status >= 500) throw new Error(`${user} ${method} ${uri} ${JSON.stringify(headers)} -> ${res.status} ${text.slice(0, 300)}`);
  if (user === 'mallory') sinks.seen.push(`${method} ${uri} -> ${res.status} ${text}`);
  return { status: res.status, text };
}

function malloryStep(r: Random, receiver: Receiver): [string, string, unknown, Record<string, string>] {
  const mine = `http://127.0.0.1:${receiver.port}/mallory`;
  switch (r.int(6)) {
    case 0: {
      // Saved or replaced (PUT inserts or updates): mallory keeps rewriting the macros ann calls.
      const name = `m${r.int(2)}`;
      return ['PUT', `/Service.Admin.Macro/Name=${name}`, { Name: name, Uri: r.pick(URIS), Headers: r.pick(HEADERS) }, {}];
    }
    case 1:
      return [
        'POST',
        '/Service.Admin.Webhook',
        {
          EventSelector: r.pick(['/Note.Inserted', '/Vault.Inserted', '/Note.Updated', '/Loot.Inserted']),
          Destination: r.pick([mine, '/Loot', '/Note']),
          Method: r.pick(['POST', 'PUT']),
          Headers: r.pick([{}, { 'X-Session': 's-mallory' }]),
          CustomPayloadRequest: r.pick([null, { URI: r.pick(URIS) }, { URI: r.pick(URIS), Headers: { 'X-Session': 's-mallory' } }]),
        },
        {},
      ];
    case 2:
      // Re-point every webhook (ann's too) at mallory, keeping or dropping the custom payload.
      return [
        'PATCH',
        '/Service.Admin.Webhook/_/unsafe=true',
        r.pick([{ Destination: mine }, { Destination: '/Loot', Method: 'PUT' }, { CustomPayloadRequest: { URI: '/Vault' } }]),
        {},
      ];
    case 3:
      return [r.pick(['GET', 'POST', 'PUT']), `/$m${r.int(2)}`, { Owner: 'mallory', Text: 'x' }, r.pick(HEADERS)];
    case 4:
      return ['GET', r.pick(URIS), undefined, r.pick(HEADERS)];
    default:
      return ['GET', r.pick(['/Loot', '/Service.Admin.Webhook', '/Service.Admin.Macro', '/Note']), undefined, {}];
  }
}

function annStep(r: Random, receiver: Receiver, n: number): [string, string, unknown, Record<string, string>] {
  switch (r.int(5)) {
    case 0:
      return ['POST', '/Note', { Owner: 'ann', Text: `${SECRET} note ${n}` }, {}];
    case 1:
      return ['POST', '/Vault', { Code: `${SECRET} ${n}` }, {}];
    case 2:
      // Her own webhook, with her session, to her own receiver path, carrying her vault.
      return [
        'POST',
        '/Service.Admin.Webhook',
        {
          EventSelector: '/Note.Inserted',
          Destination: `http://127.0.0.1:${receiver.port}/ann`,
          Headers: { 'X-Session': 's-ann' },
          CustomPayloadRequest: { URI: '/Vault', Headers: { 'X-Session': 's-ann' } },
        },
        {},
      ];
    default:
      // Reading through mallory's macros: the answer is ann's, wherever the macro points.
      return [r.pick(['GET', 'REPORT', 'HEAD']), `/$m${r.int(2)}`, undefined, {}];
  }
}

test(`fuzzed macro and webhook sequences (${SEQUENCES}, seed ${SEED}): no data of one principal reaches another`, async () => {
  const receiver = await Receiver.start();
  const random = new Random(SEED);
  const leaks: string[] = [];
  try {
    for (let s = 0; s < SEQUENCES && leaks.length < 5; s++) {
      const service = clinic();
      const sinks: Sinks = { seen: [] };
      const log: string[] = [];
      const before = receiver.calls.length;
      for (let i = 0; i < STEPS; i++) {
        const [user, step] = random.chance(0.6) ? ['mallory', malloryStep(random, receiver)] : ['ann', annStep(random, receiver, i)];
        log.push(`${user} ${step[0]} ${step[1]} ${JSON.stringify(step[2] ?? null)} ${JSON.stringify(step[3])}`);
        await act(service, user, ...step, sinks);
      }
      await service.webhooks.idle();
      for (const uri of ['/Loot', '/Note', '/Service.Admin.Webhook', '/Service.Admin.Macro'])
        await act(service, 'mallory', 'GET', uri, undefined, {}, sinks);
      const atMallory = receiver.calls.slice(before).filter((c) => c.path.startsWith('/mallory'));
      const leaked = [
        ...sinks.seen,
        ...atMallory.map((c) => `${c.method} ${c.path} ${JSON.stringify(c.headers)} ${c.body.toString()}`),
      ].filter((text) => text.includes(SECRET) || text.includes('s-ann'));
      if (leaked.length > 0) leaks.push(`sequence ${s}:\n  ${log.join('\n  ')}\n  leaked: ${leaked[0].slice(0, 400)}`);
      await service.close();
    }
  } finally {
    await receiver.close();
  }
  expect(leaks).toEqual([]);
}, 300_000);
