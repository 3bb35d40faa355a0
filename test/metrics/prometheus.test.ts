import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { hasPromtool, promtool } from '../helpers/metrics.ts';
import { cloneTemplateDb, dbUrl, dropRedisPrefix, freePort, root, runScript } from '../helpers/process.ts';
import { eventually } from '../helpers/wait.ts';
import { DIGITS } from '../helpers/cards.ts';
import { RECONCILERS } from '../../workers/reconcile.ts';
import { QUEUE_NAMES } from '../../src/queue/queues.ts';

// Debian's real Prometheus scraping the service as deployed: a web process forked twice
// (WEB_CONCURRENCY=2, the primary serving METRICS_PORT for both forks) and a worker process with a
// METRICS_PORT of its own, both behind METRICS_TOKEN, on a private port and a temporary data folder,
// scraping every second. A webhook receiver that is not running makes the delivery backlog age, and
// the shipped rule for it fires. Bounded: every wait below has its own limit, the test 60 s in all.

const hasPrometheus = spawnSync('prometheus', ['--version']).status === 0;
const TOKEN = 'prometheus-scrape-token-0123456789';
const dbName = `t_prom_${randomBytes(4).toString('hex')}`;
const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
const dir = mkdtempSync(join(tmpdir(), 'payments-prometheus-'));
const children: ChildProcess[] = [];

afterAll(async () => {
  await Promise.all(children.map((c) => stop(c)));
  rmSync(dir, { recursive: true, force: true });
  await admin`drop database if exists ${admin(dbName)} with (force)`;
  await admin.end();
  await dropRedisPrefix(dbName);
});

/** SIGTERM, then SIGKILL if the process has not exited within 10 s. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
}

/**
 * The shipped rules, with the backlog alert's threshold and hold cut from an hour and 10 minutes
 * to 2 seconds each: the expression and the series it reads are the real ones, the numbers are what
 * a test of under a minute can wait for.
 */
function rulesForTest(): string {
  const rules = readFileSync(join(root, 'docs/prometheus/alerts.yml'), 'utf8');
  const shipped = 'expr: max(webhook_delivery_oldest_pending_age_seconds) > 3600\n        for: 10m';
  expect(rules).toContain(shipped);
  return rules.replace(shipped, 'expr: max(webhook_delivery_oldest_pending_age_seconds) > 2\n        for: 2s');
}

async function prometheusApi(port: number, path: string): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/${path}`);
  const body = (await res.json()) as { status: string; data: any };
  expect(body.status).toBe('success');
  return body.data;
}

const query = async (port: number, promql: string) => (await prometheusApi(port, `query?query=${encodeURIComponent(promql)}`)).result as Array<{ metric: Record<string, string>; value: [number, string] }>;

describe('a real Prometheus scraping the service', () => {
  it('when the web (2 forks) and worker processes are scraped while a receiver is down, then every series arrives once per process group and the backlog alert fires', async (ctx) => {
    if (!hasPrometheus) return ctx.skip('prometheus is not installed (Debian package prometheus; .ci/run installs it)');
    await cloneTemplateDb(admin, dbName);
    const [apiPort, webMetrics, workerMetrics, promPort, deadPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    const env = {
      PATH: process.env.PATH,
      DATABASE_URL: dbUrl(dbName),
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: dbName,
      LOG_LEVEL: 'info',
      METRICS_TOKEN: TOKEN,
      RECONCILE_INTERVAL_MS: '1000',
    };
    const web = runScript('src/web.ts', [], { ...env, PORT: String(apiPort), WEB_CONCURRENCY: '2', METRICS_PORT: String(webMetrics) });
    const worker = runScript('src/worker.ts', [], { ...env, METRICS_PORT: String(workerMetrics) });
    children.push(web.child, worker.child);
    const ready = (port: number) => fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.ok, () => false);
    const listening = () => new Set(web.out().split('\n').filter((l) => l.includes('"msg":"listening"')).map((l) => JSON.parse(l).pid as number));
    await eventually(async () => listening().size === 2 && (await ready(webMetrics)) && (await ready(workerMetrics)), 30_000, 200);

    // Without the token the metrics port refuses.
    expect((await fetch(`http://127.0.0.1:${webMetrics}/metrics`)).status).toBe(401);

    const key = runScript('scripts/create-key.ts', ['--mode', 'test'], env);
    expect((await key.done).code).toBe(0);
    const auth = { authorization: `Bearer ${key.out().trim()}`, 'content-type': 'application/json' };
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${apiPort}${path}`, { method, headers: { ...auth, connection: 'close' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as any,
      }));
    // An endpoint nobody listens on: its delivery stays PENDING, and ages.
    expect((await api('POST', '/v1/webhook-endpoints', { url: `http://127.0.0.1:${deadPort}/hook`, enabled_events: ['payment.succeeded'] })).status).toBe(200);
    const session = await api('POST', '/v1/checkout/sessions', { amount: 2500, currency: 'usd', success_url: 'https://merchant.example/thanks' });
    expect((await api('POST', `/v1/test-helpers/checkout/sessions/${session.body.id}/pay`, { card: DIGITS.visa })).body.payment.status).toBe('SUCCEEDED');
    // Fresh connections, so that the primary hands them to both web processes.
    const answers = await Promise.all(Array.from({ length: 10 }, () => api('GET', '/v1/account')));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    // Both web processes answered some of them (their access lines name their pids).
    const servedBy = () => new Set(web.out().split('\n').filter((l) => l.includes('"path":"/v1/account"')).map((l) => JSON.parse(l).pid as number));
    await eventually(async () => servedBy().size === 2, 10_000);
    expect(servedBy()).toEqual(listening());

    // The web primary's exposition (its forks' metrics added) passes promtool.
    if (hasPromtool) {
      const text = await (await fetch(`http://127.0.0.1:${webMetrics}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      expect(promtool(['check', 'metrics'], text)).toEqual({ status: 0, out: '' });
    }

    writeFileSync(join(dir, 'alerts.yml'), rulesForTest());
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 1s }',
        'rule_files: [alerts.yml]',
        'scrape_configs:',
        `  - job_name: payments-web`,
        `    authorization: { credentials: ${TOKEN} }`,
        `    static_configs: [{ targets: ['127.0.0.1:${webMetrics}'] }]`,
        `  - job_name: payments-worker`,
        `    authorization: { credentials: ${TOKEN} }`,
        `    static_configs: [{ targets: ['127.0.0.1:${workerMetrics}'] }]`,
        '',
      ].join('\n'),
    );
    const prometheus = spawn(
      'prometheus',
      [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`, '--log.level=warn'],
      { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(prometheus);
    let promLog = '';
    prometheus.stderr!.on('data', (d) => (promLog += d));

    try {
      // Both targets up, and every series where it belongs.
      await eventually(async () => (await query(promPort, 'up{job=~"payments-.*"} == 1').catch(() => [])).length === 2, 20_000, 250);
      const requests = await eventually(async () => {
        const r = await query(promPort, 'sum(http_request_duration_seconds_count{route="/v1/account", method="GET", status="200"})');
        return r[0]?.value[1] === '10' ? r : null;
      }, 10_000, 250);
      expect(requests).toHaveLength(1);
      // One series per process group: the forks' requests were added up by the primary, not reported twice.
      expect(await query(promPort, 'http_request_duration_seconds_count{route="/v1/account", method="GET", status="200"}')).toMatchObject([{ metric: { job: 'payments-web' }, value: [expect.any(Number), '10'] }]);
      // One series per queue, and one for the first-attempt lane (webhook-lane).
      expect(await query(promPort, 'count(queue_jobs{state="waiting"}) by (job)')).toMatchObject([{ metric: { job: 'payments-worker' }, value: [expect.any(Number), String(Object.keys(QUEUE_NAMES).length + 1)] }]);
      expect(await query(promPort, 'webhook_delivery_attempts_total{outcome="failed", status_class="none"}')).toMatchObject([{ metric: { job: 'payments-worker' }, value: [expect.any(Number), '1'] }]);
      expect(await query(promPort, 'payments_collected_minor_units_total{currency="usd", mode="test"}')).toMatchObject([{ metric: { job: 'payments-web' }, value: [expect.any(Number), '2500'] }]);
      await eventually(async () => (await query(promPort, 'count(repair_pass_last_success_timestamp_seconds{job="payments-worker"})'))[0]?.value[1] === String(RECONCILERS.length), 10_000, 250);

      // The receiver stays down: the backlog alert goes pending, then fires.
      const firing = await eventually(async () => {
        const { alerts } = await prometheusApi(promPort, 'alerts');
        return (alerts as Array<{ labels: Record<string, string>; state: string }>).find((a) => a.labels.alertname === 'WebhookDeliveryBacklogOld' && a.state === 'firing');
      }, 20_000, 250);
      expect(firing.labels).toEqual({ alertname: 'WebhookDeliveryBacklogOld', severity: 'warning' });
      // And nothing else is wrong.
      const { alerts } = await prometheusApi(promPort, 'alerts');
      expect((alerts as Array<{ labels: { alertname: string } }>).map((a) => a.labels.alertname)).toEqual(['WebhookDeliveryBacklogOld']);
    } catch (err) {
      process.stderr.write(`prometheus log:\n${promLog}\n`);
      throw err;
    }
  }, 60_000);
});
