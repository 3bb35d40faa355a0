import { beforeAll, describe, expect, it } from 'vitest';
import { hasPromtool, parseExposition, promtool, sampleValue, type Sample } from '../helpers/metrics.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { useReceiver } from '../helpers/receiver.ts';
import { DIGITS } from '../helpers/cards.ts';

// The service with every worker, a real SMTP server and two local webhook receivers (one answers
// 200, one 500), GET /metrics on the API port behind METRICS_TOKEN. A payment, its deliveries and
// its receipt are driven through the API, then the exposition is read as Prometheus would.

const TOKEN = 'metrics-token-0123456789abcdef';
const smtp = useSmtp();
const ok = useReceiver(() => 200);
const failing = useReceiver(() => 500);
const t = useTestServer(() => ({
  workers: true,
  env: { METRICS_TOKEN: TOKEN, SMTP_URL: smtp.url, WEBHOOK_TEST_LOCAL_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: '600000', EMAIL_MAX_ATTEMPTS: '1' },
}));

async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parseExposition(text) };
}

let key: string;
let paymentId: string;
beforeAll(async () => {
  key = (await t.account()).test;
  for (const url of [ok.url, failing.url]) {
    const res = await t.request('POST', '/v1/webhook-endpoints', { key, body: { url, enabled_events: ['payment.succeeded'] } });
    expect(res.status).toBe(200);
  }
  const session = await t.request('POST', '/v1/checkout/sessions', {
    key,
    body: { amount: 1999, currency: 'eur', success_url: 'https://merchant.example/thanks' },
  });
  expect(session.status).toBe(200);
  const paid = await t.request('POST', `/v1/test-helpers/checkout/sessions/${session.body.id}/pay`, {
    key,
    body: { card: DIGITS.visa, email: 'ada@example.com', name: 'Ada Lovelace' },
  });
  expect(paid.body.payment.status).toBe('SUCCEEDED');
  paymentId = paid.body.payment.id;
  const abandoned = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount: 500, currency: 'eur', success_url: 'https://merchant.example/thanks' } });
  expect((await t.request('POST', `/v1/checkout/sessions/${abandoned.body.id}/expire`, { key })).body.status).toBe('EXPIRED');
  await ok.waitFor(1);
  await failing.waitFor(1);
  await smtp.waitFor((m) => m.to.includes('ada@example.com'));
  await eventually(async () => (await t.sql`select 1 from emails where status = 'SENT'`).length === 1);
  // The successful delivery is recorded, and the failed one's first attempt too.
  await eventually(async () => (await t.sql`select 1 from webhook_attempts`).length === 2);
});

describe('GET /metrics behind METRICS_TOKEN', () => {
  it('when the token is missing or wrong, then 401 api_key_missing or api_key_invalid, and no metrics', async () => {
    const none = await t.request('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('api_key_missing');
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    const wrong = await t.request('GET', '/metrics', { headers: { authorization: 'Bearer not-the-metrics-token' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('api_key_invalid');
    expect(JSON.stringify(wrong.body)).not.toContain('http_request');
  });

  it('when an API request is answered, then it is counted under its route template, method and status', async () => {
    expect((await t.request('GET', '/v1/customers/cus_0000000000000000000000', { key })).status).toBe(404);
    expect((await t.request('GET', '/no/such/page', { key })).status).toBe(404);
    const { samples } = await scrape();
    const count = (route: string, method: string, status: string) => sampleValue(samples, 'http_request_duration_seconds_count', { route, method, status });
    expect(count('/v1/checkout/sessions', 'POST', '200')).toBe(2);
    expect(count('/v1/checkout/sessions/:id/expire', 'POST', '200')).toBe(1);
    expect(count('/v1/test-helpers/checkout/sessions/:id/pay', 'POST', '200')).toBe(1);
    expect(count('/v1/customers/:id', 'GET', '404')).toBe(1);
    expect(count('unmatched', 'GET', '404')).toBe(1);
    expect(sampleValue(samples, 'http_request_duration_seconds_bucket', { route: '/v1/customers/:id', method: 'GET', status: '404', le: '+Inf' })).toBe(1);
  });

  it('when a payment, its deliveries and its receipt have happened, then the business, delivery, email, processor and job series show them', async () => {
    const { samples } = await scrape();
    const v = (name: string, labels: Record<string, string> = {}) => sampleValue(samples, name, labels);
    expect(v('checkout_sessions_created_total', { mode: 'test' })).toBe(2);
    expect(v('checkout_sessions_paid_total', { mode: 'test' })).toBe(1);
    expect(v('checkout_sessions_expired_total', { mode: 'test' })).toBe(1);
    expect(v('checkout_sessions_created_total', { mode: 'live' })).toBeUndefined();
    expect(v('payments_succeeded_total', { mode: 'test' })).toBe(1);
    expect(v('payments_collected_minor_units_total', { currency: 'eur', mode: 'test' })).toBe(1999);
    expect(v('webhook_delivery_attempts_total', { outcome: 'succeeded', status_class: '2xx' })).toBe(1);
    expect(v('webhook_delivery_attempts_total', { outcome: 'failed', status_class: '5xx' })).toBe(1);
    expect(v('webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1);
    expect(v('webhook_event_to_first_success_seconds_count')).toBe(1);
    expect(v('emails_sent_total', { transport: 'smtp' })).toBe(1);
    expect(v('emails_failed_total')).toBe(0);
    expect(v('processor_calls_total', { processor: 'simulator', operation: 'confirmPaymentIntent', outcome: 'ok' })).toBe(1);
    expect(v('processor_call_duration_seconds_count', { processor: 'simulator', operation: 'confirmPaymentIntent' })).toBe(1);
    // First attempts run in the first-attempt lane (src/webhooks/lane.ts), observed as its runs.
    expect(v('queue_job_duration_seconds_count', { queue: 'webhook-lane', outcome: 'completed' })).toBe(1);
    expect(v('queue_job_duration_seconds_count', { queue: 'webhook-lane', outcome: 'failed' })).toBe(1);
    expect(v('queue_job_duration_seconds_count', { queue: 'email', outcome: 'completed' })).toBe(1);
    // The failed delivery waits for its retry (10 minutes here): a delayed job of its queue, and pending.
    expect(v('queue_jobs', { queue: 'webhook-delivery', state: 'delayed' })).toBe(1);
    expect(v('queue_jobs', { queue: 'webhook-lane', state: 'waiting' })).toBe(0);
    expect(v('queue_jobs', { queue: 'webhook-lane', state: 'active' })).toBe(0);
    expect(v('queue_jobs', { queue: 'webhook-delivery', state: 'failed' })).toBe(0);
    expect(v('queue_jobs', { queue: 'email', state: 'waiting' })).toBe(0);
    expect(v('webhook_delivery_oldest_pending_age_seconds')).toBeGreaterThan(0);
    expect(v('webhook_delivery_overdue_seconds')).toBe(0);
    expect(v('dependency_up', { dependency: 'postgres' })).toBe(1);
    expect(v('dependency_up', { dependency: 'redis' })).toBe(1);
    expect(v('db_pool_max_connections')).toBe(10);
    expect(v('db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
    expect(v('db_pool_waiting_queries')).toBeGreaterThanOrEqual(0);
    expect(v('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(v('metrics_scrape_errors_total')).toBeUndefined();
  });

  it('when the partitions of the tables partitioned by time are made ahead, then each table shows how far ahead they reach', async () => {
    const { samples } = await scrape();
    for (const table of ['events', 'webhook_deliveries', 'webhook_attempts', 'emails', 'processor_events', 'idempotency_keys']) {
      const ahead = sampleValue(samples, 'retention_partitions_ahead_seconds', { table });
      // RETENTION_PARTITIONS_AHEAD_DAYS (14) from the start-up, to the end of the partition that holds that day (a week for emails).
      expect(ahead, table).toBeGreaterThan(13 * 86400);
      expect(ahead, table).toBeLessThan(22 * 86400);
    }
  });

  it('when the exposition is read, then no label value holds an id, and promtool check metrics finds nothing to say', async (ctx) => {
    const { text, samples } = await scrape();
    const ids = samples.flatMap((s) => Object.values(s.labels)).filter((v) => /\b(acct|cus|cs|pay|pi|evt|wd|we|re|dp|in|ip|pl|em)_[A-Za-z0-9]{8,}/.test(v));
    expect(ids).toEqual([]);
    expect(text).not.toContain(paymentId);
    if (!hasPromtool) return ctx.skip('promtool is not installed (Debian package prometheus; .ci/run installs it)');
    expect(promtool(['check', 'metrics'], text)).toEqual({ status: 0, out: '' });
  });

  it('when the mail server refuses an email for its last attempt, then the send error and the FAILED email are counted', async () => {
    smtp.refuse = 'mailbox unavailable';
    try {
      const session = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount: 700, currency: 'usd', success_url: 'https://merchant.example/thanks' } });
      await t.request('POST', `/v1/test-helpers/checkout/sessions/${session.body.id}/pay`, { key, body: { card: DIGITS.visa, email: 'lin@example.com' } });
      await eventually(async () => (await t.sql`select 1 from emails where to_address = 'lin@example.com' and status = 'FAILED'`).length === 1);
    } finally {
      smtp.refuse = null;
    }
    const { samples } = await scrape();
    expect(sampleValue(samples, 'email_send_errors_total')).toBe(1);
    expect(sampleValue(samples, 'emails_failed_total')).toBe(1);
    expect(sampleValue(samples, 'emails_sent_total', { transport: 'smtp' })).toBe(1);
    expect(sampleValue(samples, 'payments_collected_minor_units_total', { currency: 'usd', mode: 'test' })).toBe(700);
  });
});
