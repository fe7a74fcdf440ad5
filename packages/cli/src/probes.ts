import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Service } from '@resourcery/core';

/** How long the readiness path waits for each storage's check (a probe's own timeout is usually longer). */
const READY_TIMEOUT_MS = 2000;

/**
 * `--live-path` and `--ready-path` (docs/deployment.md#readiness-and-liveness): answered
 * before the service, for GET and HEAD, without an API key. Liveness is 200 whenever the
 * process answers; readiness is 200 when `service.ready()` says every storage can serve
 * (the database answers) and 503 otherwise, with its answer as the body. A handler that
 * returns false for any other path; undefined when neither path is given.
 */
export function probes(
  service: Service,
  paths: { livePath?: string; readyPath?: string },
): ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined {
  const { livePath, readyPath } = paths;
  if (livePath === undefined && readyPath === undefined) return undefined;
  const send = (req: IncomingMessage, res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== livePath && path !== readyPath) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return true;
    }
    if (path === livePath) {
      send(req, res, 200, { live: true });
      return true;
    }
    service.ready({ timeoutMs: READY_TIMEOUT_MS }).then(
      (readiness) => send(req, res, readiness.ready ? 200 : 503, readiness),
      (e: unknown) => send(req, res, 503, { ready: false, message: (e as Error).message }),
    );
    return true;
  };
}
