import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createService, MemoryStorage } from '@resourcery/core';
import { createServer } from '@resourcery/node';

/**
 * The explorer's embed control and OR conditions in Debian's chromium via puppeteer-core
 * (docs/explorer.md): the control offers the relations of the resource shown that the key
 * may read, and an OR typed into the URI box is run as OR although Chromium sends `|` as `%7C`.
 */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
if (CHROMIUM === undefined)
  console.log('explorer-browser-embed: SKIPPED, no chromium found (apt-get install -y chromium, or set CHROMIUM_PATH)');
const browserTest = CHROMIUM === undefined ? test.skip : test;

browserTest(
  'the embed control runs the resource with the relations checked; an OR typed in Chromium is run as OR',
  async () => {
    const service = createService({
      apiKeys: [
        { key: 'reader', allow: [{ resources: ['Customer', 'Order'], methods: ['GET'] }] },
        { key: 'no-orders', allow: [{ resources: ['Customer'], methods: ['GET'] }] },
      ],
    });
    service.addResource({
      name: 'Customer',
      key: 'Id',
      storage: new MemoryStorage([
        { Id: 1, Name: 'Ann' },
        { Id: 2, Name: 'Bo' },
        { Id: 3, Name: 'Cy' },
      ]),
      relations: { Orders: { toMany: 'Order', via: 'CustomerId' } },
    });
    service.addResource({
      name: 'Order',
      key: 'Id',
      storage: new MemoryStorage([
        { Id: 11, CustomerId: 1, Total: 200 },
        { Id: 12, CustomerId: 2, Total: 80 },
      ]),
    });
    const server = createServer(service, { basePath: '/api' });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
      const drive = async (key: string) =>
        JSON.parse(
          (
            await promisify(execFile)(process.execPath, [join(__dirname, 'explorer-embed-driver.mjs'), CHROMIUM!, url, key], {
              timeout: 60000,
            })
          ).stdout,
        );
      const seen = await drive('reader');
      expect(seen.orderBoxes).toEqual([]);
      expect(seen.orderControlHidden).toBe(true);
      expect(seen.customerBoxes).toEqual([['Orders', false]]);
      expect(seen.embedUri).toBe('/Customer/_/embed=Orders');
      expect(seen.embedTable).toEqual([
        ['Id', 'Name', 'Orders'],
        ['1', 'Ann', '[{"Id":11,"CustomerId":1,"Total":200}]'],
        ['2', 'Bo', '[{"Id":12,"CustomerId":2,"Total":80}]'],
        ['3', 'Cy', '[]'],
      ]);
      expect(seen.checkedAfter).toEqual([['Orders', true]]);
      expect(seen.uncheckedUri).toBe('/Customer');
      expect(seen.typedBoxes).toEqual([['Orders', true]]);
      expect(seen.typedTable).toEqual([
        ['Name', 'Orders'],
        ['Bo', '[{"Id":12,"CustomerId":2,"Total":80}]'],
      ]);
      // Chromium encodes the typed `|` as %7C, a literal `|` for the service (docs/uri.md); the
      // page sends the URI as typed in X-Resourcery-Uri, so `Id=1|3` is run as OR
      // (docs/explorer.md#or-conditions).
      expect(seen.orSent).toEqual(['/api/Customer/Id=1%7C3/offset=0&limit=26']);
      expect(seen.orTyped).toEqual(['/Customer/Id=1|3/offset=0&limit=26']);
      expect(seen.orStatus).toBe('Rows 1-2');
      expect(seen.orTable).toEqual([
        ['Id', 'Name'],
        ['1', 'Ann'],
        ['3', 'Cy'],
      ]);

      // A key that may not read Order is offered no Orders box: embed would be refused (403).
      const limited = await drive('no-orders');
      expect(limited.customerBoxes).toEqual([]);
    } finally {
      server.close();
      await service.close();
    }
  },
  120000,
);
