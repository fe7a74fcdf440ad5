import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import serveStatic from 'serve-static';

/**
 * `--static DIR`: a GET or HEAD whose path names a file under DIR (a directory names its
 * index.html) is answered with that file; anything else goes to the service. The files
 * are served by `serve-static` (what json-server and Express use): ETag and Last-Modified
 * with 304 answers, byte ranges (206 / 416), `DIR/sub/index.html` at `/sub/`, dotfiles
 * hidden, no redirect from `/sub` to `/sub/` (that path stays the service's, so a folder
 * named like a resource cannot take the resource's URIs), and paths that would
 * leave DIR (`..`, encoded or not) naming no file (docs/cli.md, "Static files").
 */
export function staticFiles(dir: string): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const serve = serveStatic(dir, { fallthrough: false, index: ['index.html'], dotfiles: 'ignore', redirect: false });
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return Promise.resolve(false);
    return new Promise((resolve) => {
      res.once('finish', () => resolve(true));
      res.once('close', () => resolve(true));
      // serve-static calls `next` only when it did not answer. No such file (404), or a
      // path it refuses (403: one leaving DIR, a dotfile): the service answers instead.
      // Any other status is about the file itself: 416 for a range past its end (the
      // Content-Range header is already set), 412 for a failed precondition, 500 when it
      // cannot be read.
      serve(req, res, (error?: unknown) => {
        const status = (error as { statusCode?: number } | undefined)?.statusCode ?? 500;
        if (status === 404 || status === 403 || res.headersSent) {
          resolve(res.headersSent);
          return;
        }
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(status === 500 ? 'The static file could not be read.\n' : `${http.STATUS_CODES[status] ?? status}\n`);
      });
    });
  };
}
