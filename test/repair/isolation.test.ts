import type { Job } from 'bullmq';
import pino from 'pino';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { emailWorker } from '../../workers/email.ts';
import { startWorkers } from '../../workers/index.ts';
import { installmentsWorker } from '../../workers/installments.ts';
import { reconcileWorker } from '../../workers/reconcile.ts';
import { parseExposition, sampleValue } from '../helpers/metrics.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { createInstallmentLink } from '../helpers/factories.ts';
import { partsOf, startPlan } from '../helpers/plans.ts';

// The repair loop with one pass failing (the processor down for the dispute pass) or hanging: the
// passes after it still repair what they find in the same round. No reconcile schedule runs here:
// each round is the reconcile job's handler, called by the test, so a round is exactly one round.

const lines: Array<Record<string, unknown>> = [];
const t = useTestServer({
  env: { REPAIR_PASS_TIMEOUT_MS: '5000', INSTALLMENT_TEST_INTERVAL_SECONDS: '3600', METRICS_TOKEN: 'metrics-token-0123456789abcdef' },
  log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
});
const round = async () => (await reconcileWorker.process({} as Job, t.s)) as Record<string, number | string>;
const statusOf = async (pass: string) => (await t.sql`select * from repair_pass_status where pass = ${pass}`)[0];

async function metrics() {
  const res = await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789abcdef' } });
  return parseExposition(await res.text());
}

let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
  await t.request('POST', '/v1/account', { key, body: { business_name: 'Tea Room' } });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('repair passes in their own guards', () => {
  it('when the processor is down during the dispute pass, then in the same round due installment parts are charged, pending emails sent and due reminders go out', async () => {
    // An installment plan (its first part paid, so a receipt waits to be sent) and an invoice sent with a reminder planned.
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url);
    const customer = await t.request('POST', '/v1/customers', { key, body: { email: 'grace@example.com', first_name: 'Grace' } });
    const inv = await t.request('POST', '/v1/invoices', {
      key,
      body: { customer_id: customer.body.id, currency: 'usd', line_items: [{ name: 'Oolong tea, 250 g', quantity: 2, amount: 1200 }], due_date: Math.ceil(Date.now() / 1000) + 86_400 },
    });
    expect((await t.request('POST', `/v1/invoices/${inv.body.id}/send`, { key })).status).toBe(200);

    // Redis loses every job (no worker has run any), and time passes: part 2 and the reminder are due, the emails stale.
    const keys = await t.s.redis.keys(`${t.s.config.redisPrefix}:*`);
    await t.s.redis.del(...keys);
    await t.sql`update installments set due_at = now() - interval '10 seconds', next_attempt_at = now() - interval '10 seconds' where plan_id = ${plan!.id} and number = 2`;
    await t.sql`update invoices set next_reminder_at = now() - interval '1 minute' where id = ${inv.body.id}`;
    await t.sql`update emails set created_at = now() - interval '1 minute' where status = 'PENDING'`;
    const pending = await t.sql`select template from emails where status = 'PENDING' order by template`;
    expect(pending.map((e) => e.template)).toEqual(['invoice', 'receipt']);

    // The processor is down for the dispute pass.
    const down = vi.spyOn(t.s.processors.test, 'listDisputes').mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:443 (processor down)'));
    const workers = await startWorkers(t.s, [installmentsWorker as never, emailWorker as never]);
    try {
      const repaired = await round();
      expect(down).toHaveBeenCalled();
      expect(repaired.disputes).toBe('failed');
      expect(repaired['installments-due']).toBe(1);
      expect(repaired['invoice-reminders']).toBe(1);
      expect(repaired.emails).toBe(2);
      expect(Object.values(repaired).filter((r) => typeof r !== 'number')).toEqual(['failed']);

      await eventually(async () => (await partsOf(t, plan!.id))[1]!.status === 'PAID');
      await eventually(async () => (await t.sql`select 1 from emails where status <> 'SENT'`).length === 0);
      const sent = await t.sql`select template from emails order by template`;
      expect(sent.map((e) => e.template)).toEqual(['invoice', 'invoice_reminder', 'receipt', 'receipt']);
    } finally {
      await workers.close();
    }

    // Logged, counted and recorded: the failure, and the others' success.
    expect(lines.filter((l) => l.msg === 'repair pass failed: the next one runs').map((l) => [l.repairPass, (l.err as { message: string }).message])).toEqual([
      ['disputes', 'connect ECONNREFUSED 127.0.0.1:443 (processor down)'],
    ]);
    expect(await statusOf('disputes')).toMatchObject({
      last_outcome: 'failure',
      last_success_at: null,
      consecutive_failures: 1,
      last_error: 'connect ECONNREFUSED 127.0.0.1:443 (processor down)',
    });
    expect(await statusOf('installments-due')).toMatchObject({ last_outcome: 'success', last_repaired: 1, consecutive_failures: 0, last_success_at: expect.any(Date) });
    const samples = await metrics();
    expect(sampleValue(samples, 'repair_pass_failures_total', { pass: 'disputes', reason: 'error' })).toBe(1);
    expect(sampleValue(samples, 'repair_pass_runs_total', { pass: 'emails' })).toBe(1);
    expect(sampleValue(samples, 'repair_pass_repaired_total', { pass: 'invoice-reminders' })).toBe(1);
    expect(sampleValue(samples, 'repair_pass_duration_seconds_count', { pass: 'disputes' })).toBe(1);
    expect(sampleValue(samples, 'repair_pass_consecutive_failures', { pass: 'disputes' })).toBe(1);
    expect(sampleValue(samples, 'repair_pass_last_success_timestamp_seconds', { pass: 'disputes' })).toBeUndefined();
    expect(sampleValue(samples, 'repair_pass_last_success_timestamp_seconds', { pass: 'emails' })).toBeGreaterThan(Date.now() / 1000 - 60);

    // /readyz shows it to operators, without the error text, and stays ready.
    const ready = await t.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ok');
    expect(ready.body.repair.passes.disputes).toEqual({ last_success: null, last_run: expect.any(Number), last_outcome: 'failure', consecutive_failures: 1, stale: true });
    expect(ready.body.repair.passes.emails).toMatchObject({ last_outcome: 'success', consecutive_failures: 0, stale: false });
    expect(JSON.stringify(ready.body)).not.toContain('ECONNREFUSED');
  }, 60_000);

  it('when a pass hangs, then the round goes on past REPAIR_PASS_TIMEOUT_MS, the next round skips it while it runs, and it runs again once it has ended', async () => {
    let release!: (page: []) => void;
    const hang = vi.spyOn(t.s.processors.test, 'listDisputes').mockImplementation(() => new Promise((resolve) => (release = resolve)));

    const first = await round();
    expect(hang).toHaveBeenCalledTimes(1);
    expect(first.disputes).toBe('timed out');
    expect(Object.entries(first).filter(([, r]) => typeof r !== 'number')).toEqual([['disputes', 'timed out']]);
    expect(await statusOf('disputes')).toMatchObject({ last_outcome: 'timeout', last_error: 'did not end within REPAIR_PASS_TIMEOUT_MS (5000 ms)' });

    const second = await round();
    expect(second.disputes).toBe('skipped (still running)');
    expect(hang).toHaveBeenCalledTimes(1);

    // The processor answers again: the hung call ends, and later calls answer at once.
    hang.mockResolvedValue([]);
    release([]);
    await eventually(async () => lines.some((l) => l.msg === 'repair pass timed out earlier has ended' && l.repairPass === 'disputes'));
    const third = await round();
    expect(third.disputes).toBe(0);
    expect(hang).toHaveBeenCalledTimes(2);
    expect(await statusOf('disputes')).toMatchObject({ last_outcome: 'success', consecutive_failures: 0, last_success_at: expect.any(Date) });

    const samples = await metrics();
    expect(sampleValue(samples, 'repair_pass_failures_total', { pass: 'disputes', reason: 'timeout' })).toBe(1);
    expect(sampleValue(samples, 'repair_pass_skipped_total', { pass: 'disputes' })).toBe(1);
  }, 60_000);
});
