import express, { Router } from 'express';
import { describe, expect, it } from 'vitest';
import { createMetrics, currencyLabel, statusClass } from '../../src/metrics/definitions.ts';
import { joinPath, methodLabel, routeTemplates } from '../../src/metrics/http.ts';
import { bearerMatches, refusal } from '../../src/metrics/routes.ts';
import { metricsServing } from '../../src/metrics/server.ts';

// The Prometheus naming rules (https://prometheus.io/docs/practices/naming/) applied to every metric
// the service defines, and the pure functions that keep the label sets bounded.

const metrics = createMetrics({ poolStats: () => ({ max: 10, open: 3, busy: 1, reserved: 2, connecting: 0, waiting: 4 }) });

/** The service's own metrics (prom-client's process_* and nodejs_* defaults aside). */
async function ownMetrics() {
  const all = await metrics.registry.getMetricsAsJSON();
  return all.filter((m) => !m.name.startsWith('process_') && !m.name.startsWith('nodejs_'));
}

/** Label names a metric may have: bounded by construction (no ids, no free text). */
const ALLOWED_LABELS = new Set(['dataset', 'route', 'method', 'status', 'queue', 'state', 'outcome', 'status_class', 'pass', 'reason', 'dependency', 'source', 'transport', 'processor', 'operation', 'mode', 'currency', 'table', 'surface', 'interval']);

describe('metric names and labels', () => {
  it('when every metric is listed, then names are snake_case with a unit, counters (and only counters) end in _total, durations in _seconds', async () => {
    const all = await ownMetrics();
    expect(all.length).toBeGreaterThan(25);
    for (const metric of all) {
      const m = { name: metric.name, help: metric.help, type: String(metric.type) };
      expect(m.name, m.name).toMatch(/^[a-z][a-z0-9_]*[a-z0-9]$/);
      expect(m.help.length, `${m.name} has help`).toBeGreaterThan(10);
      if (m.type === 'counter') expect(m.name, `${m.name} is a counter`).toMatch(/_total$/);
      else expect(m.name, `${m.name} is a ${m.type}`).not.toMatch(/_total$/);
      if (m.type === 'histogram') expect(m.name, `${m.name}: histograms here measure time`).toMatch(/_seconds$/);
      if (/duration|latency|age|time/.test(m.name)) expect(m.name).toMatch(/_seconds(_total)?$/);
      expect(m.name, 'no milliseconds: base units').not.toMatch(/_ms$|_milliseconds/);
    }
  });

  it('when the label names are read, then each is of the bounded set and none names an id', () => {
    const names = metrics.registry.getMetricsAsArray().flatMap((m) => (m as unknown as { labelNames: string[] }).labelNames ?? []);
    expect(names.length).toBeGreaterThan(20);
    for (const name of names) {
      if (['type', 'space', 'version', 'major', 'minor', 'patch', 'kind'].includes(name)) continue; // prom-client's defaults
      expect(ALLOWED_LABELS.has(name), name).toBe(true);
      expect(name).not.toMatch(/(^|_)id$/);
    }
  });

  it('when a status, a method or a currency is turned into a label, then the value comes from a fixed set', () => {
    expect([200, 204, 301, 404, 429, 500, 503].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx']);
    expect([null, undefined, 0, 42, 600].map(statusClass)).toEqual(['none', 'none', 'none', 'none', 'none']);
    expect(['GET', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PUT'].map(methodLabel)).toEqual(['GET', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PUT']);
    expect(['PROPFIND', 'MKCOL', 'get'].map(methodLabel)).toEqual(['other', 'other', 'other']);
    expect(['usd', 'eur', 'jpy', 'kwd'].map(currencyLabel)).toEqual(['usd', 'eur', 'jpy', 'kwd']);
    expect(['USD', 'xyz', 'cus_123', ''].map(currencyLabel)).toEqual(['other', 'other', 'other', 'other']);
  });

  it('when the money of a payment is counted, then it goes to its currency and mode in minor units', async () => {
    const m = createMetrics({ poolStats: () => null });
    m.paymentSucceeded({ currency: 'jpy', livemode: true, amount_cents: 500 });
    m.paymentSucceeded({ currency: 'jpy', livemode: true, amount_cents: 1200 });
    m.paymentSucceeded({ currency: 'usd', livemode: false, amount_cents: 1999 });
    const text = await m.registry.getSingleMetricAsString('payments_collected_minor_units_total');
    expect(text).toContain('payments_collected_minor_units_total{currency="jpy",mode="live"} 1700');
    expect(text).toContain('payments_collected_minor_units_total{currency="usd",mode="test"} 1999');
  });

  it("when the pool's state is read, then in use counts busy and transaction connections, and waiting the queued queries", async () => {
    expect(await metrics.registry.getSingleMetricAsString('db_pool_connections')).toContain('db_pool_connections{state="in_use"} 3');
    expect(await metrics.registry.getSingleMetricAsString('db_pool_waiting_queries')).toContain('db_pool_waiting_queries 4');
    expect(await metrics.registry.getSingleMetricAsString('db_pool_max_connections')).toContain('db_pool_max_connections 10');
  });
});

describe('route templates', () => {
  it('when routers are mounted in routers, then each route is known by its full template, never by a path with values', () => {
    const app = express();
    const customers = Router();
    const byId = (_req: unknown, res: express.Response) => void res.end();
    customers.get('/', byId);
    customers.get('/:id', byId);
    customers.post('/:id/portal-sessions', byId);
    const v1 = Router();
    v1.use('/customers', customers);
    const portal = Router();
    portal.use('/:account', (_req, _res, next) => next());
    portal.get('/:account/payments/:id', byId);
    app.get('/healthz', byId);
    app.use('/v1', v1);
    app.use('/portal', portal);
    app.use('/', Router().get('/checkout/:id', byId));
    const templates = routeTemplates(app.router as never);
    const routes = (r: Router) => r.stack.filter((l) => l.route).map((l) => templates.get(l.route!));
    expect(routes(customers)).toEqual(['/v1/customers', '/v1/customers/:id', '/v1/customers/:id/portal-sessions']);
    expect(routes(portal)).toEqual(['/portal/:account/payments/:id']);
    expect(routes(app.router as unknown as Router)).toEqual(['/healthz']);
    expect(joinPath('', '/')).toBe('/');
    expect(joinPath('/v1', '/')).toBe('/v1');
    expect(joinPath('/', '/checkout/:id')).toBe('/checkout/:id');
  });
});

describe('where /metrics is served', () => {
  const web = { web: true, forked: false, webConcurrency: 1 };
  it('when neither METRICS_PORT nor METRICS_TOKEN is set, then nowhere (never open by default)', () => {
    expect(metricsServing({ port: null, token: null }, web)).toEqual({ port: false, api: false });
    expect(metricsServing({ port: null, token: null }, { ...web, web: false })).toEqual({ port: false, api: false });
  });

  it('when METRICS_PORT is set, then on it by every primary (web, worker, both), and by no fork', () => {
    expect(metricsServing({ port: 9464, token: null }, web)).toEqual({ port: true, api: false });
    expect(metricsServing({ port: 9464, token: 'x'.repeat(16) }, { ...web, web: false })).toEqual({ port: true, api: false });
    expect(metricsServing({ port: 9464, token: null }, { web: true, forked: true, webConcurrency: 4 })).toEqual({ port: false, api: false });
  });

  it('when only METRICS_TOKEN is set, then on PORT behind it; a worker process or forked web processes refuse to start', () => {
    expect(metricsServing({ port: null, token: 'x'.repeat(16) }, web)).toEqual({ port: false, api: true });
    expect(() => metricsServing({ port: null, token: 'x'.repeat(16) }, { ...web, web: false })).toThrow(/worker process has no HTTP port.*set METRICS_PORT/);
    expect(() => metricsServing({ port: null, token: 'x'.repeat(16) }, { ...web, webConcurrency: 2 })).toThrow(/WEB_CONCURRENCY > 1.*set METRICS_PORT/);
  });

  it('when a scrape carries the token, then it passes; without it or with another, it is refused by name', () => {
    const token = 'metrics-token-0123456789abcdef';
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`Bearer ${token}x`, token)).toBe(false);
    expect(bearerMatches(token, token)).toBe(false);
    expect(refusal(`Bearer ${token}`, token)).toBeNull();
    expect(refusal(undefined, null)).toBeNull();
    expect(refusal(undefined, token)?.code).toBe('api_key_missing');
    expect(refusal('Bearer nope', token)?.code).toBe('api_key_invalid');
  });
});
