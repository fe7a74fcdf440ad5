import { createService, type Service } from '@resourcery/core';
import { call, RAW } from './handle-support';

/** What Error records redact (docs/security.md#redaction), with API keys and with the app's authenticate. */

async function recordOf(service: Service, link: string, headers: Record<string, string> = {}) {
  const r = await call(service, 'GET', link, { headers: { ...RAW, ...headers } });
  return r.json[0];
}

describe('with API keys', () => {
  const service = createService({ apiKeys: [{ key: 'k1' }] });
  service.addResource({ name: 'Lab.Sample', key: 'Id' });
  const auth = { authorization: 'apikey k1' };

  test('X-Auth-Token, X-Session and other credential-named headers are *****', async () => {
    const r = await call(service, 'GET', '/Lab.Nothing', {
      headers: { ...auth, 'X-Auth-Token': 'tok-1', 'X-Session-Id': 'ses-1', 'X-Csrf-Token': 'c', 'X-Plain': 'visible' },
    });
    const record = await recordOf(service, r.headers.errorinfo, auth);
    expect(record.Headers).toBe(
      'authorization: ***** | x-auth-token: ***** | x-session-id: ***** | x-csrf-token: ***** | x-plain: visible',
    );
  });

  test('a JSON body of megabytes: the part kept is redacted at any depth without parsing the whole (docs/limits.md#large-work)', async () => {
    const filler = Array.from({ length: 20_000 }, (_, i) => ({ Id: i, Name: `n${i}`, Note: 'x'.repeat(40) }));
    const body = [
      {
        Id: 'a',
        password: 'hunter2',
        nested: { private_key: { k: 'pk-1' }, list: [{ refreshToken: 'rt-1' }, { note: 'the "pass": word' }] },
      },
      { Id: 'b', clientSecret: null, sessionId: '', apiKey: 12345, Id2: 'visible' },
      ...filler,
    ];
    const text = JSON.stringify(body);
    expect(text.length).toBeGreaterThan(1024 * 1024);
    const r = await call(service, 'POST', '/Lab.Sample/_/bogus=1', { headers: auth, body: text });
    const record = await recordOf(service, r.headers.errorinfo, auth);
    for (const secret of ['hunter2', 'pk-1', 'rt-1', '12345']) expect(record.Body).not.toContain(secret);
    expect(record.Body).toContain('"password":"*****","nested":{"private_key":"*****","list":[{"refreshToken":"*****"}');
    expect(record.Body).toContain('"clientSecret":null,"sessionId":"","apiKey":"*****","Id2":"visible"');
    expect(record.Body.endsWith(`... (${Buffer.byteLength(text)} bytes)`)).toBe(true);
  });

  test('sessionId, private_key, refreshToken, clientSecret, password at any depth of a JSON body are *****', async () => {
    const body = {
      Id: 1,
      Id2: 'x',
      sessionId: 's',
      nested: { private_key: 'pk', list: [{ refreshToken: 'rt' }, { clientSecret: 'cs' }] },
      Pass: { newPassword: 'p' },
    };
    const r = await call(service, 'POST', '/Lab.Sample/_/bogus=1', { headers: auth, body });
    const record = await recordOf(service, r.headers.errorinfo, auth);
    expect(JSON.parse(record.Body)).toEqual({
      Id: 1,
      Id2: 'x',
      sessionId: '*****',
      nested: { private_key: '*****', list: [{ refreshToken: '*****' }, { clientSecret: '*****' }] },
      Pass: { newPassword: '*****' },
    });
  });

  test('URI conditions and query parameters named like credentials are *****, with their inline headers', async () => {
    const r = await call(service, 'GET', '/Lab.Nothing/Session=abc&Name=ann|ResetToken!=x/limit=1', { headers: auth });
    const record = await recordOf(service, r.headers.errorinfo, auth);
    expect(record.Uri).toBe('/Lab.Nothing/Session=*****&Name=ann|ResetToken!=*****/limit=1');
    // Alternatives without a locator are values of the same condition (Session=abc|def|ghi is an IN list).
    const listed = await call(service, 'GET', '/Lab.Nothing/Session=abc|def|ghi&Name=ann|bo|Secret=s|t/limit=1', { headers: auth });
    expect((await recordOf(service, listed.headers.errorinfo, auth)).Uri).toBe(
      '/Lab.Nothing/Session=*****&Name=ann|bo|Secret=*****/limit=1',
    );
    const viaSource = await call(service, 'POST', '/Lab.Sample', {
      headers: { ...auth, source: 'GET https://127.0.0.1/x [X-Auth-Token: tok-2] [X-Plain: p]' },
    });
    const sourced = await recordOf(service, viaSource.headers.errorinfo, auth);
    expect(sourced.Headers).toMatch(/source: GET https:\/\/127\.0\.0\.1\/x \[X-Auth-Token: \*\*\*\*\*\] \[X-Plain: p\]/);
    expect(sourced.Message).not.toMatch(/tok-2/);
  });
});

describe("with the app's authenticate", () => {
  function app(redact?: { headers?: Array<string | RegExp>; properties?: Array<string | RegExp> }) {
    const service = createService({
      authenticate: (request) => {
        const user = request.headers['x-user-ticket'];
        if (user === undefined) throw new Error('no ticket');
        return user.split(':')[0];
      },
      admin: { rules: { allow: () => true } },
      redact,
    });
    service.addResource({ name: 'Lab.Sample' });
    return service;
  }

  test('the headers authenticate reads are *****, whatever their names', async () => {
    const service = app();
    const headers = { 'x-user-ticket': 'ann:very-secret', 'x-plain': 'visible' };
    const r = await call(service, 'GET', '/Lab.Nothing', { headers });
    const record = await recordOf(service, r.headers.errorinfo, headers);
    expect(record.Headers).toBe('x-user-ticket: ***** | x-plain: visible');
  });

  test('the redact option adds header and property names (strings any case, or patterns)', async () => {
    const service = app({ headers: ['X-Tenant', /^x-device-/i], properties: ['ssn', /^pin$/i] });
    const headers = { 'x-user-ticket': 'ann:t', 'X-Tenant': 'acme', 'X-Device-Id': 'd1', 'X-Plain': 'v' };
    const r = await call(service, 'POST', '/Lab.Nothing/SSN=123', { headers, body: { SSN: '123-45', Deep: { PIN: 1234, Name: 'ann' } } });
    const record = await recordOf(service, r.headers.errorinfo, headers);
    expect(record.Headers).toMatch(/x-tenant: \*\*\*\*\* \| x-device-id: \*\*\*\*\* \| x-plain: v/);
    expect(JSON.parse(record.Body)).toEqual({ SSN: '*****', Deep: { PIN: '*****', Name: 'ann' } });
    expect(record.Uri).toBe('/Lab.Nothing/SSN=*****');
  });

  test('a redact list holding something else is refused at start', () => {
    expect(() => app({ headers: [42 as unknown as string] })).toThrow(/redact/);
  });
});
