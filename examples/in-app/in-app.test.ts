import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { envelopeData, startExample, type RunningExample } from '../start-example';

/** The "Using Resourcery inside your app" examples (docs/in-app.md), run as a reader would. */

const json = { 'content-type': 'application/json' };

async function orders(origin: string, headers: Record<string, string>): Promise<unknown[]> {
  const res = await fetch(`${origin}/Order/_/order_asc=Id`, { headers });
  return res.status === 204 ? [] : (await envelopeData(res)).map((o) => o.Id);
}

describe.each([
  ['Express', 'in-app/express-app.mjs'],
  ['Koa', 'in-app/koa-app.mjs'],
])("%s: the app's session reaches rules and hooks through the context option", (_name, file) => {
  let app: RunningExample;
  let api: string;
  beforeAll(async () => {
    app = await startExample(file);
    api = `${app.origin}/api`;
  });
  afterAll(() => app.stop());
  const as = (session: string) => ({ 'x-session': session });

  test('without a session the service answers 401', async () => {
    expect((await fetch(`${api}/Order`)).status).toBe(401);
  });

  test('each user reads only their own orders; the admin reads all', async () => {
    expect(await orders(api, as('ann-session'))).toEqual([1]);
    expect(await orders(api, as('bob-session'))).toEqual([2]);
    expect(await orders(api, as('root-session'))).toEqual([1, 2]);
  });

  test('a new order belongs to its creator whatever the body says, and cannot change hands', async () => {
    const post = await fetch(`${api}/Order`, {
      method: 'POST',
      headers: { ...json, ...as('bob-session') },
      body: JSON.stringify({ Id: 3, Owner: 'ann', Item: 'jam', Qty: 1 }),
    });
    expect(post.status).toBe(201);
    expect(await orders(api, as('bob-session'))).toEqual([2, 3]);
    const move = await fetch(`${api}/Order/Id=3`, {
      method: 'PATCH',
      headers: { ...json, ...as('bob-session') },
      body: JSON.stringify({ Owner: 'ann' }),
    });
    expect(move.status).toBe(403);
  });

  test("a customer cannot touch another user's order, nor delete at all", async () => {
    const patch = await fetch(`${api}/Order/Id=1`, {
      method: 'PATCH',
      headers: { ...json, ...as('bob-session') },
      body: JSON.stringify({ Qty: 9 }),
    });
    // Another user's order is not found, as a missing one (a PATCH that matches nothing is 404).
    expect(patch.status).toBe(404);
    expect(((await patch.json()) as { ErrorCode: string }).ErrorCode).toBe('NotFound');
    expect((await fetch(`${api}/Order/Id=2`, { method: 'DELETE', headers: as('bob-session') })).status).toBe(403);
    expect((await fetch(`${api}/Order/Id=2`, { method: 'DELETE', headers: as('root-session') })).status).toBe(200);
  });
});

function b64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** A JWT signed with node:crypto, so the test checks the example against an independent signer. */
function jwt(
  claims: object,
  signer: { alg: 'HS256'; secret: string } | { alg: 'RS256'; key: import('node:crypto').KeyObject; kid: string },
): string {
  const header = signer.alg === 'HS256' ? { alg: 'HS256', typ: 'JWT' } : { alg: 'RS256', typ: 'JWT', kid: signer.kid };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature =
    signer.alg === 'HS256' ? createHmac('sha256', signer.secret).update(input).digest() : sign('sha256', Buffer.from(input), signer.key);
  return `${input}.${b64url(signature)}`;
}

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe('JWT authentication with jose (examples/in-app/jwt.mjs)', () => {
  test('HS256: a valid token is the principal; a forged, expired or missing one is 401', async () => {
    const app = await startExample('in-app/jwt-app.mjs', { JWT_SECRET: 'shared-secret' });
    try {
      const good = jwt({ sub: 'ann', exp: inAnHour() }, { alg: 'HS256', secret: 'shared-secret' });
      expect(await orders(app.origin, { authorization: `Bearer ${good}` })).toEqual([1]);
      const forged = jwt({ sub: 'ann', role: 'admin', exp: inAnHour() }, { alg: 'HS256', secret: 'guessed' });
      const expired = jwt({ sub: 'ann', exp: 1000 }, { alg: 'HS256', secret: 'shared-secret' });
      for (const authorization of [`Bearer ${forged}`, `Bearer ${expired}`, 'Bearer', '']) {
        const res = await fetch(`${app.origin}/Order`, { headers: { authorization } });
        expect(res.status).toBe(401);
      }
    } finally {
      await app.stop();
    }
  });

  test('JWKS: tokens are checked against keys fetched from a JWKS URL (served here on loopback)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] };
    const idp = http.createServer((_req, res) => res.writeHead(200, json).end(JSON.stringify(jwks)));
    await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
    const app = await startExample('in-app/jwt-app.mjs', { JWKS_URL: `http://127.0.0.1:${(idp.address() as AddressInfo).port}/jwks.json` });
    try {
      const admin = jwt({ sub: 'root', role: 'admin', exp: inAnHour() }, { alg: 'RS256', key: privateKey, kid: 'k1' });
      expect(await orders(app.origin, { authorization: `Bearer ${admin}` })).toEqual([1, 2]);
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
      const foreign = jwt({ sub: 'root', role: 'admin', exp: inAnHour() }, { alg: 'RS256', key: other, kid: 'k1' });
      expect((await fetch(`${app.origin}/Order`, { headers: { authorization: `Bearer ${foreign}` } })).status).toBe(401);
    } finally {
      await app.stop();
      idp.close();
    }
  });
});
