// Prometheus-style metrics of a service (docs/operations.md#metrics): requests by resource,
// method and status, their latency, the webhook outbox and its deliveries, the open event
// streams, written in the text exposition format 0.0.4. Label values come only from
// declared resources, known methods and statuses, so their number stays bounded whatever
// URIs clients send.
import { METHODS } from '../http/types.js';
import type { RequestObserver, ResponseInfo } from '../http/observer.js';

/** The Content-Type of `Metrics.text()`: Prometheus's text exposition format 0.0.4. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The request latency histogram's upper bounds, in seconds. */
export const DEFAULT_LATENCY_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The label of requests that named no declared resource: `/`'s listing aside, an unknown name, a 401, a URI that did not parse. */
const NO_RESOURCE = '(none)';

/** How webhook delivery attempts ended (docs/webhooks.md). */
interface DeliveryCounts {
  /** The receiver answered 2xx. */
  delivered: number;
  /** It failed and will be tried again. */
  retrying: number;
  /** It failed and will not be tried again (the retry schedule ran out, 410 Gone, the webhook paused or gone). */
  givenUp: number;
}

/** What the metrics read from a service (service.ts wires them). */
export interface MetricsSources {
  observe(observer: RequestObserver<undefined>): () => void;
  /** Messages in the webhook outbox: due, held or waiting for a retry (every instance's, when they share the storage). */
  outboxDepth(): Promise<number>;
  deliveries(): Readonly<DeliveryCounts>;
  /** Event streams open in this process. */
  subscribers(): number;
}

export interface MetricsOptions {
  /** The latency histogram's upper bounds in seconds (default DEFAULT_LATENCY_BUCKETS). */
  buckets?: readonly number[];
}

/** A service's metrics, counted from when they were made (createMetrics). */
export interface Metrics {
  /** The metrics now, in the text exposition format 0.0.4 (serve it with `contentType`). */
  text(): Promise<string>;
  readonly contentType: string;
  /** Stops counting requests. */
  close(): void;
}

interface Latency {
  readonly labels: string;
  readonly counts: number[];
  sum: number;
  count: number;
}

const KNOWN_METHODS = new Set<string>([...METHODS, 'OPTIONS']);

/** Counts a service's requests from now on; see Metrics. */
export function metricsOf(sources: MetricsSources, options: MetricsOptions = {}): Metrics {
  const buckets = [...(options.buckets ?? DEFAULT_LATENCY_BUCKETS)];
  if (buckets.length === 0 || buckets.some((b, i) => !(b > 0) || !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1])))
    throw new Error('metrics buckets must be increasing positive numbers of seconds');
  const requests = new Map<string, number>();
  const latencies = new Map<string, Latency>();
  const count = (response: ResponseInfo) => {
    const resource = labelValue(response.resource ?? NO_RESOURCE);
    const method = KNOWN_METHODS.has(response.method) ? response.method : '_OTHER';
    const status = response.status >= 100 && response.status <= 599 ? String(response.status) : '_OTHER';
    const key = `resource="${resource}",method="${method}",status="${status}"`;
    requests.set(key, (requests.get(key) ?? 0) + 1);
    const labels = `resource="${resource}",method="${method}"`;
    let latency = latencies.get(labels);
    if (latency === undefined) latencies.set(labels, (latency = { labels, counts: buckets.map(() => 0), sum: 0, count: 0 }));
    const seconds = response.durationMs / 1000;
    // Each bucket counts the requests at or below its bound (cumulative), as Prometheus reads them.
    for (let i = 0; i < buckets.length; i++) if (seconds <= buckets[i]) latency.counts[i]++;
    latency.sum += seconds;
    latency.count++;
  };
  const stop = sources.observe({ onResponse: count });
  return {
    contentType: METRICS_CONTENT_TYPE,
    close: stop,
    async text() {
      const depth = await sources.outboxDepth();
      const deliveries = sources.deliveries();
      const lines: string[] = [
        '# HELP resourcery_requests_total Client requests answered, by resource, method and status.',
        '# TYPE resourcery_requests_total counter',
      ];
      for (const [labels, n] of requests) lines.push(`resourcery_requests_total{${labels}} ${n}`);
      lines.push(
        '# HELP resourcery_request_duration_seconds Time from a request to its response status and headers, by resource and method.',
        '# TYPE resourcery_request_duration_seconds histogram',
      );
      for (const l of latencies.values()) {
        buckets.forEach((b, i) => lines.push(`resourcery_request_duration_seconds_bucket{${l.labels},le="${b}"} ${l.counts[i]}`));
        lines.push(`resourcery_request_duration_seconds_bucket{${l.labels},le="+Inf"} ${l.count}`);
        lines.push(`resourcery_request_duration_seconds_sum{${l.labels}} ${l.sum}`);
        lines.push(`resourcery_request_duration_seconds_count{${l.labels}} ${l.count}`);
      }
      lines.push(
        '# HELP resourcery_webhook_outbox_messages Webhook deliveries waiting in the outbox (due, in flight or waiting for a retry).',
        '# TYPE resourcery_webhook_outbox_messages gauge',
        `resourcery_webhook_outbox_messages ${depth}`,
        '# HELP resourcery_webhook_deliveries_total Webhook delivery attempts of this process, by outcome.',
        '# TYPE resourcery_webhook_deliveries_total counter',
        `resourcery_webhook_deliveries_total{outcome="delivered"} ${deliveries.delivered}`,
        `resourcery_webhook_deliveries_total{outcome="retrying"} ${deliveries.retrying}`,
        `resourcery_webhook_deliveries_total{outcome="given_up"} ${deliveries.givenUp}`,
        '# HELP resourcery_event_stream_subscribers Event streams open in this process.',
        '# TYPE resourcery_event_stream_subscribers gauge',
        `resourcery_event_stream_subscribers ${sources.subscribers()}`,
      );
      return `${lines.join('\n')}\n`;
    },
  };
}

/** A label value as the text format writes it: backslash, double quote and newline escaped. */
function labelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}
