import { beforeAll, describe, expect, it } from 'vitest';
import { chargePart } from '../../src/installments/charge.ts';
import { linkCountersWorker } from '../../workers/link-counters.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { choosePlan, createInstallmentLink } from './helpers.ts';

// The last places of a link's quantity_limit, taken by payers who chose plans and payers paying in
// full, all at once: a plan takes one place, with its first part, held exactly under the link's
// row lock like any payment; its later parts take none.

const t = useTestServer({ workers: [linkCountersWorker] });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const linkRow = async (id: string) => (await t.sql`select * from payment_links where id = ${id}`)[0]!;

describe('the last place of a quantity_limit link, with plans', () => {
  it('when 12 payers (plans and full payments) pay at once for the last place, then exactly one wins, and a plan counts once however many parts it pays (5 rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const link = await createInstallmentLink(t, key, { quantity_limit: 1 });
      const payers = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => choosePlan(t, link.url, i % 3 === 0 ? { plan: 'full', agree: '' } : { email: `p${i}@example.com` })),
      );
      const answers = await Promise.all(payers.map(({ payer, sessionId }) => payer.pay(sessionId!, { email: 'p@example.com' })));
      expect(answers.filter((a) => a.status === 303)).toHaveLength(1);
      const refused = answers.filter((a) => a.status === 409);
      expect(refused).toHaveLength(11);
      for (const a of refused) expect(a.html).toContain('This payment link has ended');
      const succeeded = await t.sql`select * from payments where payment_link_id = ${link.id} and status = 'SUCCEEDED'`;
      expect(succeeded).toHaveLength(1);
      const plans = await t.sql`select * from installment_plans where payment_link_id = ${link.id}`;
      expect(plans.length).toBe(succeeded[0]!.installment_plan_id ? 1 : 0);
      expect((await linkRow(link.id)).status).toBe('COMPLETED');
      if (plans.length) {
        // The later parts of the winning plan are still charged, and take no place.
        for (const n of [2, 3]) expect((await chargePart(t.s, plans[0]!.id, n, { dueBy: new Date(Date.now() + 70 * 86_400_000) })).kind).toBe('paid');
        await eventually(async () => Number((await linkRow(link.id)).total_collected_cents) === 10000);
      } else {
        await eventually(async () => Number((await linkRow(link.id)).total_collected_cents) === 10000);
      }
      expect(await linkRow(link.id)).toMatchObject({ payment_count: 1, status: 'COMPLETED' });
    }
  });

  it('when a limit of 3 is raced by 10 plan payers, then exactly 3 plans are made and the link completes', async () => {
    const link = await createInstallmentLink(t, key, { quantity_limit: 3 });
    const payers = await Promise.all(Array.from({ length: 10 }, (_, i) => choosePlan(t, link.url, { email: `q${i}@example.com` })));
    const answers = await Promise.all(payers.map(({ payer, sessionId }) => payer.pay(sessionId!, { email: 'q@example.com' })));
    expect(answers.filter((a) => a.status === 303)).toHaveLength(3);
    expect(await t.sql`select 1 from installment_plans where payment_link_id = ${link.id}`).toHaveLength(3);
    expect((await linkRow(link.id)).status).toBe('COMPLETED');
    await eventually(async () => (await linkRow(link.id)).payment_count === 3);
    // PATCH sees 3 places taken: the later parts count for nothing.
    const lower = await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body: { quantity_limit: 2 } });
    expect(lower.status).toBe(400);
  });
});
