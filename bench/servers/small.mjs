// The small GET of the Express and Koa benches, as a bare handler writes it.
export const SMALL_PATH = '/Person/id=7';

/** The envelope the library answers with; TimeElapsedMs measured the same way. */
export function envelope(data, started) {
  return { Status: 'success', Data: data, DataCount: data.length, TimeElapsedMs: Math.round((performance.now() - started) * 1000) / 1000 };
}

/**
 * A one-entity answer carries its version as a strong ETag (DESIGN 13), so the bare
 * handlers send one too; its value differs by server (the library's has a per-process
 * prefix), so the check that both answer alike compares the header's presence only.
 */
export const BARE_ETAG = '"7.1"';

/**
 * The body bare node:http answers the small GET with: the envelope written as one template,
 * its elapsed time measured from `started` (servers/node-small.mjs, bench/small-get-steps.mjs).
 */
export function bareBody(people, started) {
  const data = people.filter((p) => p.id === 7);
  const elapsed = Math.round((performance.now() - started) * 1000) / 1000;
  return `{"Status":"success","Data":${JSON.stringify(data)},"DataCount":${data.length},"TimeElapsedMs":${elapsed}}`;
}

/** The headers bare node:http answers `body` with. */
export function bareHeaders(body) {
  return { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), etag: BARE_ETAG };
}
