import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createService } from '@resourcery/core';
import { createNodeListener } from '@resourcery/node';
import { sessionOf } from './event-stream-suite';

/** A real browser's EventSource (Debian's chromium, as explorer-browser.test.ts drives it). */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
if (CHROMIUM === undefined) console.log('stream-browser: SKIPPED, no chromium found (apt-get install -y chromium, or set CHROMIUM_PATH)');
const browserTest = CHROMIUM === undefined ? test.skip : test;

browserTest(
  "a browser's EventSource, authenticated by its cookie session, receives its own rows as they are inserted",
  async () => {
    const service = createService({
      authenticate: (_request, context: { user?: string }) => {
        if (context.user === undefined) throw new Error('no session');
        return { user: context.user };
      },
    });
    service.addResource({
      name: 'Note',
      rules: { rows: (caller) => (caller.principal.user === 'admin' ? null : `Owner=${caller.principal.user}`) },
    });
    const api = createNodeListener(service, {
      basePath: '/api',
      context: (req) => (typeof req.headers['x-session'] === 'string' ? { user: req.headers['x-session'] } : sessionOf(req)),
    });
    const server = http.createServer((req, res) => {
      if (req.url === '/page') res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>stream</title>');
      else api(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { stdout } = await promisify(execFile)(process.execPath, [join(__dirname, 'stream-driver.mjs'), CHROMIUM!, origin], {
        timeout: 60000,
      });
      expect(JSON.parse(stdout)).toEqual([{ id: expect.any(String), data: [{ Id: 2, Owner: 'ann', Text: 'mine' }] }]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.close();
    }
  },
  90000,
);
