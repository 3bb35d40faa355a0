import { beforeAll, describe, expect, it } from 'vitest';
import { chargePart } from '../../src/installments/charge.ts';
import { emailWorker } from '../../workers/email.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { choosePlan, createInstallmentLink, paymentsOfPlan, planRow, startPlan } from './helpers.ts';
import { linkTokens, portalLinkOwners } from './link-owners.ts';
import { createCustomer } from '../helpers/factories.ts';
import { merchantLink, pageText, PortalClient } from '../helpers/portal-client.ts';
import { CARDS } from '../helpers/cards.ts';

// Issue 21, point 1, replayed as a stranger over HTTP: what a payer types on a public page never
// reaches an existing customer's records or portal. Every email is read off a real SMTP server.
const smtp = useSmtp();
const t = useTestServer(() => ({ workers: [emailWorker], env: { SMTP_URL: smtp.current.url } }));
let key: string;
let accountId: string;
beforeAll(async () => {
  ({ test: key, accountId } = await t.account());
});

const DAY = 86_400_000;
const later = (days: number) => new Date(Date.now() + days * DAY);
/** Every email that reached `address` over SMTP, once its rows are all sent. */
async function mailTo(address: string) {
  await eventually(async () => (await t.sql`select 1 from emails where lower(to_address) = ${address} and status <> 'SENT'`).length === 0);
  return smtp.current.to(address);
}

describe('a link attached to a customer, paid in installments by a stranger', () => {
  it('when the link, plan and checkout pages are opened by a stranger, then none shows the customer\'s email or name', async () => {
    const owner = await createCustomer(t, key, { email: 'olivia.owner@example.com', first_name: 'Olivia', last_name: 'Ownerby', company_name: 'Ownerby Ltd' });
    // Paying in full, with and without the email collected: both pages, and the hosted checkout each opens.
    for (const [extra, typed] of [[{ collect_email: true }, 'stranger@evil.example'], [{}, '']] as const) {
      const link = await createInstallmentLink(t, key, { customer_id: owner.id, ...extra });
      const payer = new Payer(t);
      const page = await payer.get(pathOf(link.url));
      const src = /name="src" value="([A-Z]+)"/.exec(page.html)![1]!;
      const posted = await payer.post(pathOf(link.url), { src, plan: 'full', ...(typed ? { email: typed } : {}) });
      expect(posted.status).toBe(303);
      const checkout = await payer.get(pathOf(posted.location!));
      expect(checkout.status).toBe(200);
      for (const html of [page.html, checkout.html]) {
        for (const secret of ['olivia.owner@example.com', 'Olivia', 'Ownerby']) expect(html).not.toContain(secret);
      }
      expect(checkout.html).toContain(`name="email" type="email" autocomplete="email" value="${typed}"`);
    }
    // A plan: the email the stranger typed is prefilled, never the customer's.
    const link = await createInstallmentLink(t, key, { customer_id: owner.id });
    const chosen = await choosePlan(t, link.url, { email: 'stranger@evil.example', name: 'Sam Stranger' });
    expect(chosen.checkout!.html).toContain('value="stranger@evil.example"');
    expect(chosen.checkout!.html).not.toContain('olivia.owner@example.com');
  });

  it('when a stranger pays part 1 with a card that declines later, then the plan is the customer\'s, the notices and their portal links go to the customer\'s email on file, and the stranger receives no portal link', async () => {
    const owner = await createCustomer(t, key, { email: 'owner@example.com', first_name: 'Olivia', last_name: 'Owner' });
    const link = await createInstallmentLink(t, key, { customer_id: owner.id });
    const { plan, paid } = await startPlan(t, link.url, CARDS.laterDeclines, { email: 'stranger@evil.example', name: 'Sam Stranger' });
    expect(paid.status).toBe(303);
    expect(plan).toMatchObject({ customer_id: owner.id, email: 'owner@example.com' });

    // Part 2 declined: the notice with its portal link goes to the customer.
    expect((await chargePart(t.s, plan!.id, 2, { dueBy: later(32) })).kind).toBe('retrying');
    const notice = await smtp.current.waitFor((m) => m.to.includes('owner@example.com') && m.subject.includes('failed'));
    expect(linkTokens(notice.text)).toHaveLength(1);
    // The merchant corrects the customer's email: the next notice goes to the address on file now.
    expect((await t.request('PATCH', `/v1/customers/${owner.id}`, { key, body: { email: 'olivia@new.example' } })).status).toBe(200);
    expect((await chargePart(t.s, plan!.id, 2, { dueBy: later(34) })).kind).toBe('retrying');
    await smtp.current.waitFor((m) => m.to.includes('olivia@new.example') && m.subject.includes('failed'));
    expect((await chargePart(t.s, plan!.id, 2, { dueBy: later(36) })).kind).toBe('retrying');
    expect((await chargePart(t.s, plan!.id, 2, { dueBy: later(38) })).kind).toBe('defaulted');
    await smtp.current.waitFor((m) => m.to.includes('olivia@new.example') && m.subject.includes('has ended'));

    // The stranger got the receipt of the part they paid in person, and nothing else: no portal link.
    const strangers = await mailTo('stranger@evil.example');
    expect(strangers).toHaveLength(1);
    expect((await t.sql`select template from emails where to_address = 'stranger@evil.example'`).map((r) => r.template)).toEqual(['receipt']);
    for (const m of strangers) expect(linkTokens(m.text + m.html)).toEqual([]);
    // Every portal link that went out went to the email of the customer it signs into.
    const before = await portalLinkOwners(t, await mailTo('owner@example.com'));
    const after = await portalLinkOwners(t, await mailTo('olivia@new.example'));
    expect([before.length, after.length]).toEqual([1, 2]);
    for (const o of [...before, ...after]) expect(o.customer_id).toBe(owner.id);
    expect((await t.sql`select count(*)::int as n from portal_links where customer_id = ${owner.id}`)[0]!.n).toBe(3);
  });

  it('when a later part of such a plan is paid, then its receipt goes to the customer\'s email, not the stranger\'s', async () => {
    const owner = await createCustomer(t, key, { email: 'receipts-owner@example.com' });
    const link = await createInstallmentLink(t, key, { customer_id: owner.id });
    const { plan } = await startPlan(t, link.url, CARDS.visa, { email: 'receipts-stranger@evil.example' });
    expect((await chargePart(t.s, plan!.id, 2, { dueBy: later(32) })).kind).toBe('paid');
    const part2 = (await paymentsOfPlan(t, plan!.id))[1]!;
    expect(part2).toMatchObject({ status: 'SUCCEEDED', email: 'receipts-owner@example.com', customer_id: owner.id });
    await smtp.current.waitFor((m) => m.to.includes('receipts-owner@example.com') && m.text.includes('(payment 2 of 3)'));
    expect((await t.sql`select template from emails where to_address = 'receipts-stranger@evil.example'`).map((r) => r.template)).toEqual(['receipt']);
  });
});

describe('a link with no customer, paid in installments with an existing customer\'s email', () => {
  it('when a stranger types an existing customer\'s email, then the plan, its payments and its card go to a new customer, and the existing one\'s records and portal are unchanged', async () => {
    const victim = await createCustomer(t, key, { email: 'victim@example.com', first_name: 'Vic', last_name: 'Tim' });
    const link = await createInstallmentLink(t, key);
    const { plan } = await startPlan(t, link.url, CARDS.laterDeclines, { email: 'VICTIM@example.com', name: 'Sam Stranger' });
    expect(plan!.customer_id).not.toBe(victim.id);
    const [made] = await t.sql`select email, first_name, last_name from customers where id = ${plan!.customer_id}`;
    // The name on the stranger's card (the payer's), the email as typed.
    expect(made).toEqual({ email: 'VICTIM@example.com', first_name: 'Ada', last_name: 'Lovelace' });
    // Nothing of the stranger's lands on the existing customer: no plan, no payment, no card.
    expect(await t.sql`select id from installment_plans where customer_id = ${victim.id}`).toEqual([]);
    expect(await t.sql`select id from payments where customer_id = ${victim.id}`).toEqual([]);
    expect((await t.request('GET', `/v1/payments?customer=${victim.id}`, { key })).body.data).toEqual([]);
    // A second plan of the same email is a customer of its own too.
    const again = await startPlan(t, link.url, CARDS.visa, { email: 'victim@example.com' });
    expect([victim.id, plan!.customer_id]).not.toContain(again.plan!.customer_id);

    // The existing customer's portal shows none of it.
    const c = new PortalClient(t);
    expect((await c.follow((await merchantLink(t, key, victim.id)).url)).status).toBe(303);
    const home = pageText((await c.get(`/portal/${accountId}`)).html);
    expect(home).toContain('Hello, Vic');
    expect(home).not.toContain('Pottery course');
    expect((await c.get(`/portal/${accountId}/plans/${plan!.id}`)).status).toBe(404);
    expect((await c.get(`/portal/${accountId}/payments/${(await paymentsOfPlan(t, plan!.id))[0]!.id}`)).status).toBe(404);

    // The dunning of the stranger's plan names the stranger's record, never the existing customer's.
    expect((await chargePart(t.s, plan!.id, 2, { dueBy: later(32) })).kind).toBe('retrying');
    const notice = await smtp.current.waitFor((m) => m.to.includes('VICTIM@example.com') && m.subject.includes('failed'));
    const [owner] = await portalLinkOwners(t, [notice]);
    expect(owner).toMatchObject({ customer_id: plan!.customer_id, sentTo: 'VICTIM@example.com' });
    expect((await planRow(t, plan!.id)).customer_id).toBe(plan!.customer_id);
  });
});
