import { describe, expect, it } from 'vitest';
import { withTx } from '../../src/db/tx.ts';
import * as payments from '../../src/payments/store.ts';
import { DIGITS } from '../helpers/cards.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

const rollup = async (accountId: string, currency: string) => {
  const [r] = await t.sql<{ gross: string; ok: string; failed: string }[]>`
    select coalesce(sum(gross_cents), 0)::text as gross, coalesce(sum(succeeded_count), 0)::text as ok, coalesce(sum(failed_count), 0)::text as failed
    from report_daily where account_id = ${accountId} and livemode = false and currency = ${currency}`;
  return { gross: Number(r!.gross), ok: Number(r!.ok), failed: Number(r!.failed) };
};

const fromRecords = async (accountId: string, currency: string) => {
  const [r] = await t.sql<{ gross: string; ok: string; failed: string }[]>`
    select coalesce(sum(amount_cents) filter (where status = 'SUCCEEDED'), 0)::text as gross,
      count(*) filter (where status = 'SUCCEEDED')::text as ok, count(*) filter (where status = 'FAILED')::text as failed
    from payments where account_id = ${accountId} and livemode = false and currency = ${currency}`;
  return { gross: Number(r!.gross), ok: Number(r!.ok), failed: Number(r!.failed) };
};

describe('rollups under concurrent payments', () => {
  it('when 80 payment outcomes of one account, day and currency commit at the same time, then the rollup holds their exact sums', async () => {
    const { accountId } = await t.account();
    const o = { accountId, livemode: false };
    // PENDING attempts seeded through SQL (the test is about the outcomes' transactions, not the API).
    const ids = await t.sql<{ id: string; amount_cents: number }[]>`
      insert into payments (id, account_id, livemode, amount_cents, currency)
      select 'pay_race' || g || ${accountId}, ${accountId}, false, 100 + g, 'eur' from generate_series(1, 80) g
      returning id, amount_cents`;
    // Each in its own transaction, all at once: two out of three succeed, the rest fail.
    await Promise.all(
      ids.map((p, i) =>
        withTx(t.s, t.s.log, (tx) => (i % 3 === 2 ? payments.markFailed(tx.sql, o, p.id, 'card_declined', 'Declined') : payments.markSucceeded(tx.sql, o, p.id))),
      ),
    );
    const expected = await fromRecords(accountId, 'eur');
    expect(expected.ok + expected.failed).toBe(80);
    expect(await rollup(accountId, 'eur')).toEqual(expected);
    const [declines] = await t.sql<{ n: string }[]>`select sum(count)::text as n from report_declines where account_id = ${accountId} and code = 'card_declined'`;
    expect(Number(declines!.n)).toBe(expected.failed);
  });

  it('when a transaction that recorded a success rolls back, then its figures leave the rollup with it', async () => {
    const { accountId } = await t.account();
    const o = { accountId, livemode: false };
    const [p] = await t.sql<{ id: string }[]>`insert into payments (id, account_id, livemode, amount_cents, currency) values (${`pay_rb${accountId}`}, ${accountId}, false, 5000, 'usd') returning id`;
    await expect(
      withTx(t.s, t.s.log, async (tx) => {
        await payments.markSucceeded(tx.sql, o, p!.id);
        throw new Error('a later step failed');
      }),
    ).rejects.toThrow('a later step failed');
    expect(await rollup(accountId, 'usd')).toEqual({ gross: 0, ok: 0, failed: 0 });
  });

  it('when payments are paid concurrently through the hosted checkout API, then the rollup equals the sums of the payments', async () => {
    const { accountId, test: key } = await t.account();
    const sessions = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => (await t.request('POST', '/v1/checkout/sessions', { key, body: { amount: 1000 + i, currency: 'gbp', success_url: 'https://example.com/ok' } })).body.id as string),
    );
    const answers = await Promise.all(
      sessions.map((id, i) => t.request('POST', `/v1/test-helpers/checkout/sessions/${id}/pay`, { key, body: { card: i % 4 === 3 ? DIGITS.declined : DIGITS.visa } })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const expected = await fromRecords(accountId, 'gbp');
    expect(expected).toMatchObject({ ok: 6, failed: 2 });
    expect(await rollup(accountId, 'gbp')).toEqual(expected);
  });
});
