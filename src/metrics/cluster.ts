import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

// WEB_CONCURRENCY > 1: the forked web processes keep their own registries; the primary, which
// serves METRICS_PORT, asks each for its metrics over the cluster's IPC channel and adds them to its
// own (counters and histograms summed, gauges by their aggregator), so a scrape sees the machine's
// web processes as one target. prom-client's own cluster listener is not used: it would leave the
// primary's own registry (workers, queues, repair passes) out.

const REQUEST = 'payments-service:metrics-request';
const ANSWER = 'payments-service:metrics-answer';

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

interface Answer {
  type: typeof ANSWER;
  id: number;
  metrics?: MetricsJson;
  error?: string;
}

/** In a forked web process: answers the primary's requests with this process's metrics. */
export function answerMetricsRequests(registry: Registry): void {
  process.on('message', (msg: { type?: string; id?: number }) => {
    if (msg?.type !== REQUEST || !process.send) return;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: ANSWER, id: msg.id, metrics }),
      (err: Error) => process.send?.({ type: ANSWER, id: msg.id, error: err.message }),
    );
  });
}

let nextId = 0;

/**
 * In the primary: the metrics of every live fork, waiting at most `timeoutMs` for them; `missing`
 * is how many did not answer in time (or answered an error).
 */
export async function forkMetrics(timeoutMs: number): Promise<{ metrics: MetricsJson[]; missing: number }> {
  const forks = Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected());
  if (forks.length === 0) return { metrics: [], missing: 0 };
  const id = nextId++;
  const answers: MetricsJson[] = [];
  await new Promise<void>((resolve) => {
    let pending = forks.length;
    const timer = setTimeout(finish, timeoutMs);
    function finish() {
      clearTimeout(timer);
      for (const w of forks) w!.off('message', onMessage);
      resolve();
    }
    function onMessage(msg: Answer) {
      if (msg?.type !== ANSWER || msg.id !== id) return;
      if (msg.metrics) answers.push(msg.metrics);
      if (--pending === 0) finish();
    }
    for (const w of forks) {
      w!.on('message', onMessage);
      w!.send({ type: REQUEST, id });
    }
  });
  return { metrics: answers, missing: forks.length - answers.length };
}

/** One exposition of the primary's own metrics and its forks'. */
export async function aggregated(own: Registry, forks: MetricsJson[]): Promise<{ text: string; contentType: string }> {
  const registry = AggregatorRegistry.aggregate([await own.getMetricsAsJSON(), ...forks]);
  return { text: await registry.metrics(), contentType: registry.contentType };
}
