// The small GET of the Express and Koa benches, as a bare handler writes it.
export const SMALL_PATH = '/Person/id=7';

/** The envelope the library answers with; TimeElapsedMs measured the same way. */
export function envelope(data, started) {
  return { Status: 'success', Data: data, DataCount: data.length, TimeElapsedMs: Math.round((performance.now() - started) * 1000) / 1000 };
}
