import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from '../lib/errors.ts';
import { StartupError } from '../lib/dependencies.ts';
import type { Services } from '../services.ts';
import { aggregated, forkMetrics } from './cluster.ts';
import { exposition, METRICS_PATH, refusal } from './routes.ts';
import { readAtScrape, SCRAPE_READ_TIMEOUT_MS } from './scrape.ts';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

const json = (res: http.ServerResponse, e: ApiError, headers: Record<string, string> = {}) =>
  res.writeHead(e.status, { 'Content-Type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(e.toBody()));

/**
 * METRICS_PORT: GET /metrics on a port of its own (and METRICS_HOST), behind METRICS_TOKEN when it
 * is set; nothing else is served there. `forks`: this is the primary of forked web processes, and
 * their metrics are added to its own (src/metrics/cluster.ts).
 */
export async function listenMetrics(s: Services, opts: { forks: boolean }): Promise<MetricsServer> {
  const { port, host, token } = s.config.metrics;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?', 1)[0];
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return json(res, new ApiError('route_not_found', `Unrecognized request URL (${req.method}: ${path}). This port serves GET ${METRICS_PATH} only.`));
    }
    const refused = refusal(req.headers.authorization, token);
    if (refused) return json(res, refused, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    void render(s, opts.forks).then(
      ({ text, contentType }) => res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        s.log.error({ err }, 'metrics: the exposition failed');
        json(res, new ApiError('internal_error', 'The metrics could not be gathered.'));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new StartupError(`cannot listen on METRICS_PORT ${port} (${err.code ?? 'error'}): ${err.code === 'EADDRINUSE' ? 'it is already in use; set METRICS_PORT to a free port' : err.message}.`)),
    );
    server.listen(port!, host ?? undefined, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function render(s: Services, forks: boolean): Promise<{ text: string; contentType: string }> {
  if (!forks) return exposition(s);
  const [, fromForks] = await Promise.all([readAtScrape(s), forkMetrics(SCRAPE_READ_TIMEOUT_MS)]);
  if (fromForks.missing) s.metrics.scrapeErrors.inc({ source: 'web_processes' }, fromForks.missing);
  return aggregated(s.metrics.registry, fromForks.metrics);
}

/**
 * Where this process serves /metrics, or the start-up error of a setting that would leave it
 * unscraped: `port` (METRICS_PORT, in a primary), `api` (METRICS_TOKEN alone: on PORT, in a web
 * process that is not forked), or neither (metrics off: the default).
 */
export function metricsServing(
  metrics: { port: number | null; token: string | null },
  p: { web: boolean; forked: boolean; webConcurrency: number },
): { port: boolean; api: boolean } {
  if (metrics.port !== null) return { port: !p.forked, api: false };
  if (metrics.token === null) return { port: false, api: false };
  if (!p.web) throw new StartupError('METRICS_TOKEN is set without METRICS_PORT: a worker process has no HTTP port to serve /metrics on; set METRICS_PORT.');
  if (p.webConcurrency > 1) {
    throw new StartupError('METRICS_TOKEN is set without METRICS_PORT and WEB_CONCURRENCY > 1: each scrape of PORT would reach one web process; set METRICS_PORT (the primary serves them all).');
  }
  return { port: false, api: true };
}
