import type { IncomingMessage, ServerResponse } from 'node:http';

/** How `serve` logs requests: one line each, as text or JSON (docs/operations.md#the-clis-access-log). */
export type AccessLogFormat = 'text' | 'json';

/**
 * Logs one line per request once its response is finished (or the client left):
 * `GET /Person/Age>40 200 1.9 ms 53 B`, or with `--log json`
 * `{"time":"...","method":"GET","uri":"/Person/Age>40","status":200,"ms":1.9,"bytes":53,"remote":"127.0.0.1"}`.
 * `bytes` counts the body bytes written (a streamed body too), headers left out.
 */
export function accessLogger(format: AccessLogFormat, print: (line: string) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    let logged = false;
    let bytes = 0;
    const writeBody = res.write.bind(res) as (...args: unknown[]) => boolean;
    const endBody = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    // Counted where the body goes out: the service streams most GETs without a Content-Length.
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      bytes += sizeOf(chunk);
      return writeBody(chunk, ...rest);
    }) as ServerResponse['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'function') bytes += sizeOf(chunk);
      return endBody(chunk, ...rest);
    }) as ServerResponse['end'];
    const log = () => {
      if (logged) return;
      logged = true;
      const ms = Math.round((performance.now() - started) * 10) / 10;
      // A client that left before the response was finished: its status never reached it.
      const status = res.writableFinished ? res.statusCode : 0;
      const method = req.method ?? '';
      const uri = req.url ?? '';
      if (format === 'json') {
        const remote = req.socket.remoteAddress;
        print(`${JSON.stringify({ time: new Date().toISOString(), method, uri, status, ms, bytes, remote })}\n`);
      } else print(`${method} ${uri} ${status === 0 ? 'aborted' : status} ${ms} ms ${bytes} B\n`);
    };
    res.once('finish', log);
    res.once('close', log);
  };
}

function sizeOf(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}
