// The load generator: a child process of its own (never the server's), driven over IPC
// by bench/lib/http.mjs. Each message `{ id, options }` runs one autocannon session and
// answers `{ id, result }` with the figures the bench needs.
import autocannon from 'autocannon';

process.on('message', async ({ id, options }) => {
  try {
    const r = await autocannon({ connections: 10, pipelining: 1, ...options });
    process.send({
      id,
      result: {
        requests: r.requests.total,
        duration: r.duration,
        rps: r.requests.total / r.duration,
        non2xx: r.non2xx,
        errors: r.errors,
        timeouts: r.timeouts,
        latencyP50: r.latency.p50,
        latencyP99: r.latency.p99,
      },
    });
  } catch (error) {
    process.send({ id, error: String(error?.stack ?? error) });
  }
});
process.send({ ready: true });
