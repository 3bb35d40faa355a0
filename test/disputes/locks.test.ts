import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { disputed } from './helpers.ts';

// The dispute sync records a dispute under its payment's row lock and inserts it `on conflict do
// nothing`, so a dispute it already has makes it wait for whoever holds that dispute's row. The
// merchant's submit must therefore never wait for the payment's lock while it holds the dispute's:
// a second update of the dispute in one transaction did (Postgres checks the foreign key again,
// `for key share` on the payment), and a full run once failed on the deadlock.
const t = useTestServer({ workers: true });
let key: string;
let other: postgres.Sql;
beforeAll(async () => {
  key = (await t.account()).test;
  other = postgres(t.s.config.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await other?.end();
});

describe('evidence submitted while the sync holds the payment', () => {
  it('when evidence is changed and submitted while the sync holds the payment and inserts the same dispute, then both finish, with no deadlock', async () => {
    const { paymentId, dispute } = await disputed(t, key, 3100);
    const [row] = await t.sql<{ processor_dispute_id: string }[]>`select processor_dispute_id from disputes where id = ${dispute.id}`;

    await other.begin(async (sync) => {
      // The sync's transaction: the payment's row lock first (as paymentForDispute takes it).
      await sync`select id from payments where id = ${paymentId} for update`;
      const submit = t.request('PATCH', `/v1/disputes/${dispute.id}`, {
        key,
        body: { evidence: { product_description: 'A blue mug', uncategorized_text: 'winning_evidence' }, submit: true },
      });
      let answered = false;
      void submit.then(() => (answered = true));
      // The submit either finishes (it never needs the payment) or waits for the payment's lock.
      await eventually(async () => {
        if (answered) return true;
        const [w] = await t.sql<{ n: number }[]>`
          select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
          where c.relname = 'payments' and not l.granted`;
        return w!.n > 0;
      });
      // Then the sync inserts the dispute it already has: it waits for the submit's transaction.
      const inserted = await sync`
        insert into disputes (id, account_id, livemode, payment_id, processor_dispute_id, processor_created_at, amount_cents, currency, reason, status, evidence_due_by)
        select 'dp_again', account_id, livemode, payment_id, processor_dispute_id, processor_created_at, amount_cents, currency, reason, status, evidence_due_by
        from disputes where id = ${dispute.id}
        on conflict (processor_dispute_id) do nothing returning id`;
      expect(inserted).toEqual([]);
      const res = await submit;
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ id: dispute.id, status: 'UNDER_REVIEW', evidence: { product_description: 'A blue mug' } });
    });
    const rows = await t.sql`select id, status from disputes where processor_dispute_id = ${row!.processor_dispute_id}`;
    expect(rows).toEqual([{ id: dispute.id, status: expect.stringMatching(/^(UNDER_REVIEW|WON)$/) }]);
  });
});
