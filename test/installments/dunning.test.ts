import { beforeAll, describe, expect, it } from 'vitest';
import { spendPortalLink } from '../../src/customers/portal-links.ts';
import { chargePart } from '../../src/installments/charge.ts';
import { startCardUpdate } from '../../src/installments/service.ts';
import { emailWorker } from '../../workers/email.ts';
import { installmentsWorker } from '../../workers/installments.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import { createInstallmentLink, eventTypes, partsOf, paymentsOfPlan, planRow, startPlan } from './helpers.ts';
import { CARDS } from '../helpers/cards.ts';

// Dunning: a later part declined (card 4000 0000 0000 0341: the first payment succeeds, every
// later off-session charge is declined) is retried 1, 3 and 5 days after its first failure; each
// failure emails the customer (over real SMTP) a one-time portal link; the card replaced through
// the card-update flow (a setup session of the hosted checkout, over HTTP) brings the retry
// forward and it is paid; without a new card, the last retry defaults the plan.

const smtp = useSmtp();
const t = useTestServer(() => ({ workers: [emailWorker, installmentsWorker], env: { SMTP_URL: smtp.url } }));
let key: string;
let accountId: string;
beforeAll(async () => {
  ({ test: key, accountId } = await t.account());
  await t.request('POST', '/v1/account', { key: await t.key(accountId, 'live'), body: { business_name: 'Clay & Co' } });
});

const DAY = 86_400_000;
const inAMonth = () => new Date(Date.now() + 32 * DAY);
const tokenOf = (text: string) => /token=([A-Za-z0-9_-]{43})/.exec(text)?.[1] ?? null;

/** A plan whose later parts will be declined, with part 2 tried once (declined): answers the plan. */
async function failingPlan(email: string) {
  const link = await createInstallmentLink(t, key);
  const { plan } = await startPlan(t, link.url, CARDS.laterDeclines, { email });
  expect(plan).toMatchObject({ status: 'ACTIVE', card_last4: '0341' });
  const out = await chargePart(t.s, plan!.id, 2, { dueBy: inAMonth() });
  expect(out.kind).toBe('retrying');
  return plan!;
}

describe('a declined part', () => {
  it('when part 2 is declined, then it is RETRYING a day later with payment.failed, and the customer gets an email over SMTP whose portal link signs in once', async () => {
    const plan = await failingPlan('retry-me@example.com');
    const [part1, part2] = await partsOf(t, plan.id);
    expect(part1!.status).toBe('PAID');
    expect(part2).toMatchObject({ status: 'RETRYING', attempt_count: 1 });
    expect(part2!.next_attempt_at!.getTime() - part2!.first_failed_at!.getTime()).toBe(DAY);
    const failed = (await paymentsOfPlan(t, plan.id))[1]!;
    expect(failed).toMatchObject({ status: 'FAILED', failure_code: 'card_declined', installment_number: 2 });
    expect(await eventTypes(t, failed.id as string)).toEqual(['payment.failed']);
    expect(await eventTypes(t, plan.id)).toEqual(['installment_plan.created']);

    const mail = await smtp.waitFor((m) => m.to.includes('retry-me@example.com') && m.subject.includes('failed'));
    expect(mail.subject).toBe('Payment 2 of 3 to Clay & Co failed');
    expect(mail.text).toContain('$33.33');
    expect(mail.text).toContain('Visa ending in 0341');
    expect(mail.text).toContain('Your card was declined.');
    expect(mail.text).toContain('Update your card: http://127.0.0.1:');
    const token = tokenOf(mail.text);
    expect(token).not.toBeNull();
    expect(mail.html).toContain(`token=${token}`);
    // The link signs the customer in once, to this account's portal, for the plan's customer.
    expect(await spendPortalLink(t.sql, accountId, token!)).toEqual({ customer_id: plan.customer_id, livemode: false });
    expect(await spendPortalLink(t.sql, accountId, token!)).toBeNull();
    const [link] = await t.sql`select expires_at from portal_links where customer_id = ${plan.customer_id} order by created_at desc limit 1`;
    expect((link!.expires_at as Date).getTime() - Date.now()).toBeGreaterThan(6 * DAY);
    // The API never shows the email's one-time link, and the stored row loses it once sent.
    const [row] = await t.sql`select id from emails where template = 'installment_failed' and to_address = 'retry-me@example.com'`;
    await eventually(async () => (await t.sql`select status from emails where id = ${row!.id}`)[0]!.status === 'SENT');
    const api = (await t.request('GET', `/v1/emails/${row!.id}`, { key })).body;
    expect(api.text).not.toContain(token);
    expect((await t.sql`select text_body from emails where id = ${row!.id}`)[0]!.text_body).not.toContain(token);
  });

  it('when the customer replaces the card through the card-update page, then the retry is charged at once on the new card and paid', async () => {
    const plan = await failingPlan('new-card@example.com');
    const { session, url } = await startCardUpdate(t.s, { accountId, livemode: false }, plan.id, 'https://shop.example/portal');
    expect(session).toMatchObject({ mode: 'setup', amount_cents: 0, payment_status: 'no_payment_required', customer_id: plan.customer_id });
    const api = (await t.request('GET', `/v1/checkout/sessions/${session.id}`, { key })).body;
    expect(api).toMatchObject({ mode: 'setup', amount_cents: 0, payment_status: 'no_payment_required', status: 'OPEN' });

    const payer = new Payer(t);
    const page = await payer.get(pathOf(url));
    expect(page.status).toBe(200);
    expect(page.html).toContain('Save a new card');
    expect(page.html).toContain('Nothing is charged now');
    // A declined card is refused on the page, the plan's card unchanged.
    const declined = await payer.post(`${pathOf(url)}/pay`, { email: 'new-card@example.com', name: 'Ada Lovelace', card_number: CARDS.declined, expiry: '12/34', cvc: '123' });
    expect(declined.status).toBe(402);
    expect((await planRow(t, plan.id)).card_last4).toBe('0341');
    const saved = await payer.post(`${pathOf(url)}/pay`, { email: 'new-card@example.com', name: 'Ada Lovelace', card_number: '5555 5555 5555 4444', expiry: '12/34', cvc: '123' });
    expect(saved.status).toBe(303);
    const done = await payer.get(pathOf(saved.location!));
    expect(done.html).toContain('Your card is saved');
    expect(done.html).toContain('ending in 4444');

    const row = await planRow(t, plan.id);
    expect(row).toMatchObject({ card_brand: 'mastercard', card_last4: '4444', status: 'ACTIVE' });
    expect(row.processor_payment_method).toMatch(/^pm_sim_/);
    // The retry brought forward runs on the installments worker, without waiting its day.
    await eventually(async () => (await partsOf(t, plan.id))[1]!.status === 'PAID', 10_000);
    const payments = await paymentsOfPlan(t, plan.id);
    expect(payments.map((p) => [p.installment_number, p.status, p.card_last4])).toEqual([
      [1, 'SUCCEEDED', '0341'],
      [2, 'FAILED', '0341'],
      [2, 'SUCCEEDED', '4444'],
    ]);
    expect((await partsOf(t, plan.id))[1]).toMatchObject({ attempt_count: 2, payment_id: payments[2]!.id });
    expect((await t.request('GET', `/v1/checkout/sessions/${session.id}`, { key })).body).toMatchObject({ status: 'COMPLETE', payment_status: 'no_payment_required', payment_id: null });
    // The next part is charged on the new card too.
    expect((await chargePart(t.s, plan.id, 3, { dueBy: new Date(Date.now() + 70 * DAY) })).kind).toBe('paid');
    expect(await eventTypes(t, plan.id)).toEqual(['installment_plan.created', 'installment_plan.completed']);
  });

  it('when the new card asks for 3-D Secure, then the page shows the challenge, and passing it saves the card', async () => {
    const plan = await failingPlan('three-ds@example.com');
    const { url } = await startCardUpdate(t.s, { accountId, livemode: false }, plan.id, 'https://shop.example/portal');
    const payer = new Payer(t);
    await payer.get(pathOf(url));
    const challenged = await payer.post(`${pathOf(url)}/pay`, { email: 'three-ds@example.com', name: 'Ada', card_number: CARDS.threeDS, expiry: '12/34', cvc: '123' });
    expect(challenged.status).toBe(303);
    expect(challenged.location).toMatch(/\/authenticate\?setup=seti_/);
    const challenge = await payer.get(pathOf(challenged.location!));
    expect(challenge.html).toContain('Confirm your card');
    const setupId = /name="setup" value="(seti_[0-9a-z]+)"/.exec(challenge.html)![1]!;
    expect((await planRow(t, plan.id)).card_last4).toBe('0341');
    const passed = await payer.post(`${pathOf(url)}/authenticate`, { setup: setupId, outcome: 'complete' });
    expect(passed.status).toBe(303);
    expect((await planRow(t, plan.id)).card_last4).toBe('3220');
    await eventually(async () => (await partsOf(t, plan.id))[1]!.status === 'PAID', 10_000);
  });

  it('when a card update is asked for a plan that is not ACTIVE, of another owner, or with a bad return URL, then it is refused', async () => {
    const plan = await failingPlan('refused@example.com');
    await expect(startCardUpdate(t.s, { accountId, livemode: true }, plan.id, 'https://shop.example')).rejects.toMatchObject({ code: 'resource_missing' });
    await expect(startCardUpdate(t.s, { accountId, livemode: false }, plan.id, 'javascript:alert(1)')).rejects.toMatchObject({ code: 'parameter_invalid', param: 'return_url' });
    await t.request('POST', `/v1/installment-plans/${plan.id}/cancel`, { key });
    await expect(startCardUpdate(t.s, { accountId, livemode: false }, plan.id, 'https://shop.example')).rejects.toMatchObject({ code: 'resource_invalid_state' });
  });

  it('when no new card comes, then the retries 1, 3 and 5 days after the first failure are declined, the plan DEFAULTS and the customer is told', async () => {
    const second = await t.account(); // advance-time acts on the whole account
    const key2 = second.test;
    await t.request('POST', '/v1/account', { key: second.live, body: { business_name: 'Clay & Co' } });
    const link = (await t.request('POST', '/v1/payment-links', { key: key2, body: { amount: 10000, currency: 'usd', description: 'Glaze class', installment_enabled: true } })).body;
    const { plan } = await startPlan(t, link.url, CARDS.laterDeclines, { email: 'defaulter@example.com' });
    // 40 days: part 2 is due, then each retry (a day, 3 days and 5 days after its failure) falls due within them too.
    const res = await t.request('POST', '/v1/test-helpers/advance-time', { key: key2, body: { seconds: 40 * 86400 } });
    expect(res.body).toMatchObject({ installments_charged: 4, has_more: false });
    const row = await planRow(t, plan!.id);
    expect(row.status).toBe('DEFAULTED');
    expect((await partsOf(t, plan!.id)).map((p) => [p.status, p.attempt_count, p.next_attempt_at])).toEqual([
      ['PAID', 1, null],
      ['FAILED', 4, null],
      ['CANCELLED', 0, null],
    ]);
    const payments = await paymentsOfPlan(t, plan!.id);
    expect(payments.map((p) => p.status)).toEqual(['SUCCEEDED', 'FAILED', 'FAILED', 'FAILED', 'FAILED']);
    expect(await eventTypes(t, plan!.id)).toEqual(['installment_plan.created', 'installment_plan.defaulted']);
    const [event] = await t.sql`select data from events where type = 'installment_plan.defaulted' and data->'object'->>'id' = ${plan!.id}`;
    expect(event!.data.object).toMatchObject({ status: 'DEFAULTED', amount_paid_cents: 3334 });
    // Three failure notices (each with its link), then the default notice.
    await smtp.waitFor((m) => m.to.includes('defaulter@example.com') && m.subject.includes('has ended'));
    const notices = await eventually(async () => {
      const got = smtp.to('defaulter@example.com').filter((m) => !m.subject.toLowerCase().includes('receipt'));
      return got.length === 4 ? got : null;
    });
    expect(notices.filter((m) => m.subject.includes('failed'))).toHaveLength(3);
    const last = notices.find((m) => m.subject.includes('has ended'))!;
    expect(last.subject).toBe('Your payment plan with Clay & Co has ended');
    expect(last.text).toContain('$33.34 of $100.00 was paid');
    // A defaulted plan is charged no more.
    expect((await chargePart(t.s, plan!.id, 3, { dueBy: new Date(Date.now() + 90 * DAY) })).kind).toBe('ended');
  });
});
