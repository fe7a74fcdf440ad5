import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';

/**
 * The explorer page in a real headless browser: Debian's chromium (`.ci/run` installs it),
 * driven by puppeteer-core in a child process. EXPLORER_SCREENSHOT=path also saves a
 * screenshot (docs/explorer.png is made that way).
 */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));

if (CHROMIUM === undefined) {
  console.log('explorer-browser: SKIPPED, no chromium found (apt-get install -y chromium, or set CHROMIUM_PATH)');
}
const browserTest = CHROMIUM === undefined ? test.skip : test;

const PEOPLE = Array.from({ length: 14 }, (_, i) => ({ Id: i + 1, Name: `Person ${String(i + 1).padStart(2, '0')}`, Age: 16 + i }));

browserTest(
  'the explorer lists resources, runs URIs with paging, links errors and downloads files',
  async () => {
    const service = createService({
      apiKeys: [
        { key: 'secret-key', allow: [{ resources: ['*'], methods: ['GET'] }] },
        { key: 'writer-key', allow: [{ resources: ['Person'], methods: ['POST'] }] },
      ],
    });
    service.addResource({
      name: 'Person',
      description: 'People we know',
      schema: { type: 'object', properties: { Id: { type: 'integer' }, Name: { type: 'string' }, Age: { type: 'integer' } } },
      views: [{ name: 'Adults', conditions: 'Age>=18' }],
    });
    // A binary resource (docs/binary-resources.md): a 1x1 PNG.
    service.addBinaryResource({
      name: 'Chart.Png',
      description: 'A chart',
      contentType: 'image/png',
      read: () => Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64'),
    });
    const seeded = await service.handle({
      method: 'POST',
      uri: '/Person',
      headers: { 'content-type': 'application/json', authorization: 'apikey writer-key' },
      body: JSON.stringify([...PEOPLE, { Id: 99, Name: 'R&D', Age: 40 }]),
    });
    expect(seeded.status).toBe(201);
    const server = createServer(service, { basePath: '/api' });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const downloads = await mkdtemp(join(tmpdir(), 'explorer-downloads-'));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
      const args = [
        join(__dirname, 'explorer-driver.mjs'),
        CHROMIUM!,
        url,
        downloads,
        ...(process.env.EXPLORER_SCREENSHOT ? [process.env.EXPLORER_SCREENSHOT] : []),
      ];
      const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 60000 });
      const seen = JSON.parse(stdout);

      // Without a key the page asks for one; the key entered then opens the resource list.
      expect(seen.withoutKey).toContain('Enter an API key');
      expect(seen.errorWithoutKey).toContain('NotAuthorized');
      expect(seen.resources).toEqual(expect.arrayContaining(['Person', 'Service.Admin.Error', 'Service.Admin.Macro']));
      expect(seen.personBox).toContain('People we know');
      expect(seen.personBox).toContain('Age: integer');
      expect(seen.personBox).toContain('-Adults');
      expect(seen.personBox).toContain('GET');

      // Paging over Age>=18 ordered by Age: 13 adults (12 from PEOPLE, and R&D), 10 per page.
      expect(seen.columns).toEqual(['Id', 'Name', 'Age']);
      expect(seen.firstPage).toEqual(
        PEOPLE.filter((p) => p.Age >= 18)
          .slice(0, 10)
          .map((p) => p.Name),
      );
      expect(seen.secondStatus).toBe('Rows 11-13');
      expect(seen.secondPage).toEqual([
        ...PEOPLE.filter((p) => p.Age >= 18)
          .slice(10)
          .map((p) => p.Name),
        'R&D',
      ]);
      expect(seen.nextDisabledAtEnd).toBe(true);

      expect(seen.error).toContain('UnknownProperty');
      expect(seen.errorRecordUri).toMatch(/^\/Service\.Admin\.Error\/id=/);
      expect(seen.errorRecordColumns).toEqual(expect.arrayContaining(['Id', 'ErrorCode', 'Uri']));
      expect(seen.encodedValue).toEqual(['99', 'R&D', '40']);

      expect(seen.downloadStatus).toMatch(/^Downloaded Person_\d{12}\.jsonl \(\d+ bytes\)$/);
      expect(seen.downloads).toHaveLength(2);
      expect(seen.downloads).toEqual(
        expect.arrayContaining([expect.stringMatching(/^Person_\d{12}\.jsonl$/), expect.stringMatching(/^Person_\d{12}\.xlsx$/)]),
      );
      // A binary resource: its content type is listed; running it offers the bytes and shows the image.
      expect(seen.chartBox).toContain('image/png');
      expect(seen.binaryStatus).toBe('Save image/png (68 bytes)');
      expect(seen.binaryImageWidth).toBe(1);
      // The key stays in the page's memory, and nothing is fetched from other hosts.
      expect(seen.storage).toEqual({ local: 0, session: 0, cookie: '' });
      expect(seen.foreign).toEqual([]);
    } finally {
      server.close();
      await service.close();
      await rm(downloads, { recursive: true, force: true });
    }
  },
  90000,
);

browserTest(
  'the explorer sends requests, and the API key, only to its own origin',
  async () => {
    const service = createService({ apiKeys: [{ key: 'secret-key', allow: [{ resources: ['*'], methods: ['GET'] }] }] });
    service.addResource({ name: 'Person', storage: new MemoryStorage([{ Id: 1, Name: 'Ann' }]) });
    // Mounted at the root: base + uri is then the typed text itself.
    const server = createServer(service);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const uris = ['//evil.example/steal', '/\\evil.example/steal', 'http://evil.example/steal', '/Person'];
      const args = [join(__dirname, 'explorer-origin-driver.mjs'), CHROMIUM!, url, 'secret-key', ...uris];
      const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 60000 });
      const seen = JSON.parse(stdout);
      expect(seen.foreign).toEqual([]);
      const refused = `Failed: the explorer sends requests only to its own origin, ${url.slice(0, -1)}, not to http://evil.example`;
      expect(seen.statuses.slice(0, 2)).toEqual([refused, refused]);
      // An absolute URL is read as a path of this origin (the service answers it with an error).
      expect(seen.statuses[2]).toMatch(/^Failed/);
      // An ordinary URI still runs.
      expect(seen.statuses[3]).toBe('Rows 1-1');
    } finally {
      server.close();
      await service.close();
    }
  },
  90000,
);
