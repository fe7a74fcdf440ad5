import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMetrics, type Service } from '@resourcery/core';

/** How long the readiness path waits for each storage's check (a probe's own timeout is usually longer). */
const READY_TIMEOUT_MS = 2000;

/**
 * `--live-path`, `--ready-path` (docs/deployment.md#readiness-and-liveness) and
 * `--metrics-path` (docs/operations.md#metrics): answered before the service, for GET and
 * HEAD, without an API key. Liveness is 200 whenever the process answers; readiness is 200
 * when `service.ready()` says every storage can serve (the database answers) and 503
 * otherwise, with its answer as the body; metrics are the service's Prometheus text
 * (createMetrics), counted from start. A handler that returns false for any other path;
 * undefined when no path is given.
 */
export function probes(
  service: Service,
  paths: { livePath?: string; readyPath?: string; metricsPath?: string },
): ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined {
  const { livePath, readyPath, metricsPath } = paths;
  if (livePath === undefined && readyPath === undefined && metricsPath === undefined) return undefined;
  if (metricsPath !== undefined && (metricsPath === livePath || metricsPath === readyPath))
    throw new Error(`the metrics path ${metricsPath} must differ from the readiness and liveness paths`);
  const metrics = metricsPath === undefined ? undefined : createMetrics(service);
  const send = (req: IncomingMessage, res: ServerResponse, status: number, text: string, type = 'application/json') => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== livePath && path !== readyPath && path !== metricsPath) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return true;
    }
    if (path === livePath) {
      send(req, res, 200, JSON.stringify({ live: true }));
      return true;
    }
    if (path === metricsPath) {
      metrics!.text().then(
        (text) => send(req, res, 200, text, metrics!.contentType),
        (e: unknown) => send(req, res, 503, JSON.stringify({ message: (e as Error).message })),
      );
      return true;
    }
    service.ready({ timeoutMs: READY_TIMEOUT_MS }).then(
      (readiness) => send(req, res, readiness.ready ? 200 : 503, JSON.stringify(readiness)),
      (e: unknown) => send(req, res, 503, JSON.stringify({ ready: false, message: (e as Error).message })),
    );
    return true;
  };
}
