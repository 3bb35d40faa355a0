import { beforeAll, describe, expect, it } from 'vitest';
import { rebuildReports } from '../../src/reports/store.ts';
import { DIGITS } from '../helpers/cards.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

const t = useTestServer({ workers: true });

/** Sums computed straight from payments, refunds and disputes, per currency and UTC day: the reports' rules written again, independently of src/reports. */
async function sumsFromRecords(accountId: string, livemode: boolean, trunc: 'day' | 'week' | 'month' = 'day') {
  const rows = await t.sql<{ currency: string; start: string; gross: string; ok: string; failed: string; refunded: string; refunds: string; disputed: string; disputes: string; lost: string; lost_n: string }[]>`
    with changes as (
      select currency, succeeded_at as at, amount_cents as gross, 1 as ok, 0 as failed, 0 as refunded, 0 as refunds, 0 as disputed, 0 as disputes, 0 as lost, 0 as lost_n
        from payments where account_id = ${accountId} and livemode = ${livemode} and status = 'SUCCEEDED'
      union all select currency, failed_at, 0, 0, 1, 0, 0, 0, 0, 0, 0 from payments where account_id = ${accountId} and livemode = ${livemode} and status = 'FAILED'
      union all select currency, updated_at, 0, 0, 0, amount_cents, 1, 0, 0, 0, 0 from refunds where account_id = ${accountId} and livemode = ${livemode} and status = 'SUCCEEDED'
      union all select currency, created_at, 0, 0, 0, 0, 0, amount_cents, 1, 0, 0 from disputes where account_id = ${accountId} and livemode = ${livemode}
      union all select currency, closed_at, 0, 0, 0, 0, 0, 0, 0, amount_cents, 1 from disputes where account_id = ${accountId} and livemode = ${livemode} and status = 'LOST'
    )
    select currency, to_char(date_trunc(${trunc}, at at time zone 'utc'), 'YYYY-MM-DD') as start,
      sum(gross)::text as gross, sum(ok)::text as ok, sum(failed)::text as failed, sum(refunded)::text as refunded, sum(refunds)::text as refunds,
      sum(disputed)::text as disputed, sum(disputes)::text as disputes, sum(lost)::text as lost, sum(lost_n)::text as lost_n
    from changes group by 1, 2 order by 1, 2`;
  return rows.map((r) => ({
    currency: r.currency,
    start: r.start,
    gross_amount_cents: Number(r.gross),
    succeeded_count: Number(r.ok),
    failed_count: Number(r.failed),
    refunded_amount_cents: Number(r.refunded),
    refund_count: Number(r.refunds),
    disputed_amount_cents: Number(r.disputed),
    dispute_count: Number(r.disputes),
    dispute_lost_amount_cents: Number(r.lost),
    dispute_lost_count: Number(r.lost_n),
    net_amount_cents: Number(r.gross) - Number(r.refunded) - Number(r.lost),
  }));
}

type Summary = { currencies: Array<{ currency: string; totals: Record<string, number>; periods: Array<Record<string, number | string>>; decline_reasons: Array<{ code: string; count: number }> }> };

/** The non-empty periods of a summary, in the shape of sumsFromRecords. */
const periodsOf = (body: Summary) =>
  body.currencies.flatMap((c) =>
    c.periods
      .filter((p) => (p.succeeded_count as number) + (p.failed_count as number) + (p.refund_count as number) + (p.dispute_count as number) + (p.dispute_lost_count as number) > 0)
      .map((p) => ({
        currency: c.currency,
        start: p.start,
        gross_amount_cents: p.gross_amount_cents,
        succeeded_count: p.succeeded_count,
        failed_count: p.failed_count,
        refunded_amount_cents: p.refunded_amount_cents,
        refund_count: p.refund_count,
        disputed_amount_cents: p.disputed_amount_cents,
        dispute_count: p.dispute_count,
        dispute_lost_amount_cents: p.dispute_lost_amount_cents,
        dispute_lost_count: p.dispute_lost_count,
        net_amount_cents: p.net_amount_cents,
      })),
  );

const today = () => new Date().toISOString().slice(0, 10);

describe('GET /v1/reports/summary, from payments made through the API', () => {
  let acct: { accountId: string; test: string; live: string };
  let other: { accountId: string; test: string; live: string };

  const pay = async (key: string, amount: number, currency: string, card: string) => {
    const cs = await t.request('POST', '/v1/checkout/sessions', { key, body: { amount, currency, success_url: 'https://example.com/ok' } });
    expect(cs.status).toBe(200);
    const paid = await t.request('POST', `/v1/test-helpers/checkout/sessions/${cs.body.id}/pay`, { key, body: { card, email: 'payer@example.com', name: 'Payer' } });
    if (paid.status !== 200) throw new Error(`pay: ${paid.status} ${JSON.stringify(paid.body)}`);
    const [row] = await t.sql<{ id: string; status: string }[]>`select id, status from payments where checkout_session_id = ${cs.body.id}`;
    return row!;
  };

  beforeAll(async () => {
    acct = await t.account();
    other = await t.account();
    const a = await pay(acct.test, 4000, 'eur', DIGITS.visa);
    await pay(acct.test, 1500, 'eur', DIGITS.visa);
    await pay(acct.test, 1999, 'usd', DIGITS.visa);
    await pay(acct.test, 2500, 'eur', DIGITS.declined);
    await pay(acct.test, 2500, 'eur', DIGITS.declined);
    await pay(acct.test, 700, 'eur', DIGITS.insufficientFunds);
    await pay(other.test, 99_000, 'eur', DIGITS.visa);
    expect(a.status).toBe('SUCCEEDED');
    // A refund, settled by the service's own job.
    const refund = await t.request('POST', '/v1/refunds', { key: acct.test, body: { payment_id: a.id, amount: 1000 } });
    expect(refund.status).toBe(200);
    await eventually(async () => (await t.sql`select 1 from refunds where id = ${refund.body.id} and status = 'SUCCEEDED'`).length > 0);
    // Two disputes: one accepted (lost), one left open.
    const b = await pay(acct.test, 3000, 'eur', DIGITS.visa);
    const c = await pay(acct.test, 999, 'usd', DIGITS.visa);
    const lost = await t.request('POST', `/v1/test-helpers/payments/${b.id}/dispute`, { key: acct.test, body: {} });
    expect(lost.status).toBe(200);
    expect((await t.request('POST', `/v1/test-helpers/payments/${c.id}/dispute`, { key: acct.test, body: {} })).status).toBe(200);
    expect((await t.request('POST', `/v1/disputes/${lost.body.id}/close`, { key: acct.test, body: {} })).status).toBe(200);
    await eventually(async () => (await t.sql`select 1 from disputes where id = ${lost.body.id} and status = 'LOST'`).length > 0);
  });

  it('when the summary is asked for, then every figure equals the sums computed in SQL from payments, refunds and disputes, per currency and day', async () => {
    const res = await t.request('GET', `/v1/reports/summary?from=${today()}&to=${today()}`, { key: acct.test });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'report_summary', livemode: false, interval: 'day', from: today(), to: today(), timezone: 'UTC' });
    expect(periodsOf(res.body)).toEqual(await sumsFromRecords(acct.accountId, false));
    const eur = res.body.currencies.find((c: { currency: string }) => c.currency === 'eur');
    expect(eur.totals).toMatchObject({ gross_amount_cents: 8500, succeeded_count: 3, failed_count: 3, payment_count: 6, success_rate: 0.5, refunded_amount_cents: 1000, dispute_lost_amount_cents: 3000, net_amount_cents: 4500 });
    expect(eur.decline_reasons).toEqual([
      { code: 'card_declined', count: 2 },
      { code: 'insufficient_funds', count: 1 },
    ]);
    const usd = res.body.currencies.find((c: { currency: string }) => c.currency === 'usd');
    expect(usd.totals).toMatchObject({ gross_amount_cents: 2998, disputed_amount_cents: 999, dispute_count: 1, dispute_lost_count: 0, success_rate: 1 });
    expect(usd.decline_reasons).toEqual([]);
  });

  it('when the rollups are rebuilt from the records, then they are exactly the rows the transactional hooks kept', async () => {
    const snapshot = async () => ({
      daily: await t.sql`select * from report_daily where account_id = ${acct.accountId} order by livemode, currency, day`,
      declines: await t.sql`select * from report_declines where account_id = ${acct.accountId} order by livemode, currency, day, code`,
    });
    const kept = await snapshot();
    expect(kept.daily.length).toBeGreaterThan(0);
    await t.sql.begin((sql) => rebuildReports(sql, acct.accountId));
    expect(await snapshot()).toEqual(kept);
  });

  it('when one currency is asked for, then only it is answered; amounts are never added across currencies', async () => {
    const res = await t.request('GET', '/v1/reports/summary?currency=usd', { key: acct.test });
    expect(res.status).toBe(200);
    expect(res.body.currencies.map((c: { currency: string }) => c.currency)).toEqual(['usd']);
    expect(res.body.currencies[0].periods).toHaveLength(30);
    expect(res.body.currencies[0].periods.at(-1)).toMatchObject({ start: today(), end: today(), gross_amount_cents: 2998 });
    const all = await t.request('GET', '/v1/reports/summary', { key: acct.test });
    expect(all.body.currencies.map((c: { currency: string }) => c.currency)).toEqual(['eur', 'usd']);
  });

  it('when another account or the live mode asks, then it sees only its own figures', async () => {
    const mine = await t.request('GET', '/v1/reports/summary', { key: other.test });
    expect(mine.body.currencies).toHaveLength(1);
    expect(mine.body.currencies[0].totals.gross_amount_cents).toBe(99_000);
    const live = await t.request('GET', '/v1/reports/summary', { key: acct.live });
    expect(live.body).toMatchObject({ livemode: true, currencies: [] });
  });

  it.each([
    ['interval=hour', 'interval'],
    ['from=2026-02-30', 'from'],
    ['to=yesterday', 'to'],
    ['from=2026-05-02&to=2026-05-01', 'from'],
    ['interval=day&from=2020-01-01&to=2026-01-01', 'from'],
    ['currency=usdollar', 'currency'],
    ['currency=USD', 'currency'],
    ['limit=10', 'limit'],
    ['from[]=2026-01-01', 'from[]'],
  ])('when the query is %s, then the answer is a 400 naming %s', async (query, param) => {
    const res = await t.request('GET', `/v1/reports/summary?${query}`, { key: acct.test });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
  });
});

describe('GET /v1/reports/summary, weeks and months over seeded history', () => {
  it('when payments of past days are seeded and the rollups rebuilt, then weeks (Monday first) and months sum exactly as date_trunc does in SQL', async () => {
    const { accountId, test: key } = await t.account();
    // 400 payments over 200 days (some failed, some refunded), seeded straight into the tables.
    await t.sql`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, failure_code, succeeded_at, failed_at, created_at)
      select 'pay_seed' || g || ${accountId}, ${accountId}, false, case when g % 5 = 0 then 'FAILED' else 'SUCCEEDED' end,
        100 + g * 7, case when g % 3 = 0 then 'usd' else 'eur' end, case when g % 5 = 0 then (array['card_declined', 'expired_card'])[1 + g % 2] end,
        case when g % 5 <> 0 then timestamptz '2026-03-01 23:30:00+00' + g * interval '12 hours' end,
        case when g % 5 = 0 then timestamptz '2026-03-01 23:30:00+00' + g * interval '12 hours' end,
        timestamptz '2026-03-01 23:30:00+00' + g * interval '12 hours'
      from generate_series(1, 400) g`;
    await t.sql`
      insert into refunds (id, account_id, livemode, payment_id, amount_cents, currency, status, created_at, updated_at)
      select 're_seed' || id, account_id, false, id, 50, currency, 'SUCCEEDED', succeeded_at, succeeded_at + interval '1 day'
      from payments where account_id = ${accountId} and status = 'SUCCEEDED' and amount_cents % 4 = 0`;
    await t.sql.begin((sql) => rebuildReports(sql, accountId));
    for (const interval of ['week', 'month'] as const) {
      const res = await t.request('GET', `/v1/reports/summary?interval=${interval}&from=2026-02-23&to=2026-10-04`, { key });
      expect(res.status).toBe(200);
      expect(periodsOf(res.body)).toEqual(await sumsFromRecords(accountId, false, interval));
      for (const c of res.body.currencies) {
        for (const p of c.periods) if (interval === 'week') expect(new Date(`${p.start}T00:00:00Z`).getUTCDay() === 1 || p.start === '2026-02-23').toBe(true);
      }
    }
  });
});
