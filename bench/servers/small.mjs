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
