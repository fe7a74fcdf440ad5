import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiKeyPrincipal, createService } from '@resourcery/core';
import { createNodeListener } from '@resourcery/node';

/**
 * The explorer's live view in a real headless browser (Debian's chromium driven by
 * puppeteer-core, as explorer-browser.test.ts does): a selector typed in the page streams
 * its events, and the page sees exactly what the key's holder may GET.
 */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
if (CHROMIUM === undefined) {
  console.log('explorer-browser-live: SKIPPED, no chromium found (apt-get install -y chromium, or set CHROMIUM_PATH)');
}
const browserTest = CHROMIUM === undefined ? test.skip : test;

browserTest(
  "the explorer's live view streams a selector's events with the key's rights and rows; Stop closes the stream",
  async () => {
    const service = createService({
      apiKeys: [
        { key: 'red-key', name: 'red', allow: [{ resources: ['Person', 'Person.*'], methods: ['GET'] }] },
        { key: 'pets-key', name: 'pets', allow: [{ resources: ['Pet', 'Pet.*'], methods: ['GET'] }] },
        { key: 'writer-key', name: 'writer', allow: [{ resources: ['Person'], methods: ['POST'] }] },
      ],
    });
    service.addResource({
      name: 'Person',
      key: 'Id',
      schema: { type: 'object', properties: { Id: { type: 'integer' }, Team: { type: 'string' }, Age: { type: 'integer' } } },
      // The red key's holder may read red rows only.
      rules: {
        rows: (caller) => (caller.principal instanceof ApiKeyPrincipal && caller.principal.name === 'red' ? 'Team=red' : null),
      },
    });
    service.addResource({ name: 'Pet', key: 'Id' });
    const api = createNodeListener(service);
    // The driver asks how many streams the service has open, to see that Stop closes its own.
    const server = http.createServer((req, res) => {
      if (req.url === '/open-streams') res.writeHead(200, { 'content-type': 'application/json' }).end(String(service.streams.opened()));
      else api(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { stdout } = await promisify(execFile)(process.execPath, [join(__dirname, 'explorer-live-driver.mjs'), CHROMIUM!, origin], {
        timeout: 60000,
      });
      const seen = JSON.parse(stdout);

      // Without a key, and with a key that may not GET Person, the stream is refused.
      expect(seen.withoutKey.status).toBe('Refused (HTTP 401)');
      expect(seen.withoutKey.error).toContain('NotAuthorized');
      expect(seen.otherKey.status).toBe('Refused (HTTP 403)');
      expect(seen.otherKey.error).toMatch(/^Forbidden/);

      // A selector naming another host is not fetched: the key goes to this service only.
      expect(seen.otherHost).toMatch(
        /^Failed: the explorer sends requests only to its own origin, http:\/\/127\.0\.0\.1:\d+, not to http:\/\/evil\.example$/,
      );

      // Clicking the event resource in the list watches it.
      expect(seen.clicked).toEqual({ selector: '/Person.Inserted', status: 'Watching /Person.Inserted' });

      // Of the four inserts, the red key sees only red rows of age 18 or more: never a blue
      // row (not even beside a red one in the same insert), never a younger red one.
      expect(seen.status).toBe('Watching /Person.Inserted/Age>=18');
      expect(seen.count).toBe('2');
      expect(seen.events).toEqual([
        { event: 'Person.Inserted', id: expect.any(String), data: [{ Id: 5, Team: 'red', Age: 20 }] },
        { event: 'Person.Inserted', id: expect.any(String), data: [{ Id: 3, Team: 'red', Age: 40 }] },
      ]);
      expect(seen.events[0].id).not.toBe(seen.events[1].id);

      // Stop closes the stream on the server, not only in the page.
      expect(seen.stopped).toBe('Stopped');
      expect(seen.openAfterStop).toBe(0);
      expect(seen.foreign).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.close();
    }
  },
  90000,
);
