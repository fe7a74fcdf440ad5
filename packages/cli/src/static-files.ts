import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/**
 * `--static DIR`: a GET or HEAD whose path names a file under DIR (`/` names index.html)
 * is answered with that file; anything else goes to the service. Paths that would leave
 * DIR (`..`, encoded or not) name no file.
 */
export function staticFiles(dir: string): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const root = path.resolve(dir);
  return async (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const file = fileFor(root, req.url ?? '/');
    if (file === undefined) return false;
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return false;
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
      'content-length': String(info.size),
      'last-modified': info.mtime.toUTCString(),
    });
    if (req.method === 'HEAD') res.end();
    else
      createReadStream(file)
        .on('error', (e) => res.destroy(e))
        .pipe(res);
    return true;
  };
}

function fileFor(root: string, url: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(url.split('?')[0]);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const file = path.resolve(root, `.${decoded === '/' ? '/index.html' : decoded}`);
  return file.startsWith(root + path.sep) ? file : undefined;
}
