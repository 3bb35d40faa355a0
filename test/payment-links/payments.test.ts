import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { linkCountersWorker } from '../../workers/link-counters.ts';
import { createLink, payThroughLink } from './helpers.ts';
import { eventsFor } from '../helpers/events.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { eventually } from '../helpers/wait.ts';

const t = useTestServer({ workers: [linkCountersWorker] });
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const linkRow = async (id: string) => (await t.sql`select * from payment_links where id = ${id}`)[0]!;
const succeeded = async (id: string) =>
  (await t.sql`select count(*)::int as n from payments where payment_link_id = ${id} and status = 'SUCCEEDED'`)[0]!.n as number;

describe('paying through a link', () => {
  it('when a payer pays through a MULTI link, then session and payment carry the link and source, both events are recorded and the counters converge', async () => {
    const link = await createLink(t, key, { collect_name: true, collect_email: true, collect_phone: true, description: 'Row A' });
    const { sessionId, paid } = await payThroughLink(t, `${link.url}?src=QR`, { name: 'Grace Hopper', email: 'grace@example.com', phone: '+44 20 7946 0000' });
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`${t.url}/l/${link.id}/paid?session=${sessionId}`);

    const [session] = await t.sql`select * from checkout_sessions where id = ${sessionId}`;
    expect(session).toMatchObject({
      status: 'COMPLETE',
      payment_link_id: link.id,
      link_source: 'QR',
      amount_cents: 2500,
      currency: 'usd',
      customer_email: 'grace@example.com',
      description: 'Row A',
      metadata: { payer_name: 'Grace Hopper', payer_phone: '+44 20 7946 0000' },
    });
    const [payment] = await t.sql`select * from payments where id = ${session!.payment_id}`;
    expect(payment).toMatchObject({ status: 'SUCCEEDED', payment_link_id: link.id, link_source: 'QR', amount_cents: 2500 });
    expect(await eventsFor(t, sessionId)).toContain('checkout.session.completed');
    expect(await eventsFor(t, payment!.id)).toContain('payment.succeeded');

    const converged = await eventually(async () => {
      const row = await linkRow(link.id);
      return row.payment_count === 1 && row.view_count === 1 ? row : null;
    });
    expect(converged).toMatchObject({ status: 'ACTIVE', total_collected_cents: 2500 });

    const thanks = await new Payer(t).get(pathOf(paid.location!));
    expect(thanks.html).toContain('Payment successful');
    expect(thanks.html).toContain(`/checkout/${sessionId}/receipt`);

    const analytics = await t.request('GET', `/v1/payment-links/${link.id}/analytics`, { key });
    expect(analytics.body.sources.find((s: { source: string }) => s.source === 'QR')).toEqual({
      source: 'QR',
      views: 1,
      payments: 1,
      amount_collected_cents: 2500,
      amount_refunded_cents: 0,
      net_collected_cents: 2500,
    });
  });

  it('when a SINGLE link is paid, then it is COMPLETED at once and a payer holding an open session is refused uncharged', async () => {
    const link = await createLink(t, key, { type: 'SINGLE' });
    const late = new Payer(t);
    await late.get(pathOf(link.url));
    const started = await late.post(pathOf(link.url), {});
    expect(started.status).toBe(303);
    const lateSession = /\/(cs_[0-9a-z]+)/.exec(started.location!)![1]!;
    await late.get(pathOf(started.location!));

    const first = await payThroughLink(t, link.url);
    expect(first.paid.status).toBe(303);
    expect((await linkRow(link.id)).status).toBe('COMPLETED');
    const api = await t.request('GET', `/v1/payment-links/${link.id}`, { key });
    expect(api.body.status).toBe('COMPLETED');
    expect(await eventsFor(t, link.id)).toEqual([]);

    const refused = await late.pay(lateSession);
    expect(refused.status).toBe(409);
    expect(refused.html).toContain('This payment link has ended');
    const attempts = await t.sql`select status from payments where checkout_session_id = ${lateSession}`;
    expect(attempts.filter((p) => p.status === 'SUCCEEDED')).toHaveLength(0);
    expect(await succeeded(link.id)).toBe(1);

    const page = await new Payer(t).get(pathOf(link.url));
    expect(page.html).toContain('This payment link has ended');
    expect(page.html).not.toContain('<form');
  });

  it('when 20 payers pay at once on a link with quantity_limit 5, then exactly 5 succeed and the link is COMPLETED (5 rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const link = await createLink(t, key, { quantity_limit: 5 });
      // Every payer first gets as far as the card form, then all pay in the same instant.
      const payers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const p = new Payer(t);
          await p.get(pathOf(link.url));
          const started = await p.post(pathOf(link.url), {});
          await p.get(pathOf(started.location!));
          return { p, session: /\/(cs_[0-9a-z]+)/.exec(started.location!)![1]! };
        }),
      );
      const answers = await Promise.all(payers.map(({ p, session }) => p.pay(session)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 303)).toHaveLength(5);
      expect(statuses.filter((s) => s === 409)).toHaveLength(15);
      for (const a of answers.filter((x) => x.status === 409)) expect(a.html).toContain('This payment link has ended');
      expect(await succeeded(link.id)).toBe(5);
      expect((await linkRow(link.id)).status).toBe('COMPLETED');
      await eventually(async () => (await linkRow(link.id)).payment_count === 5);
      expect((await linkRow(link.id)).total_collected_cents).toBe(5 * 2500);
    }
  });

  it('when the link expires or is cancelled while a payer is on the checkout page, then the payment is refused uncharged', async () => {
    for (const end of ['expire', 'cancel'] as const) {
      const link = await createLink(t, key);
      const p = new Payer(t);
      await p.get(pathOf(link.url));
      const started = await p.post(pathOf(link.url), {});
      const session = /\/(cs_[0-9a-z]+)/.exec(started.location!)![1]!;
      await p.get(pathOf(started.location!));
      if (end === 'expire') await t.sql`update payment_links set expires_at = now() - interval '1 second' where id = ${link.id}`;
      else await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body: { status: 'CANCELLED' } });
      const answer = await p.pay(session);
      expect(answer.status).toBe(409);
      expect(answer.html).toContain(end === 'expire' ? 'This payment link has expired' : 'deactivated by the merchant');
      expect(await succeeded(link.id)).toBe(0);
    }
  });

  it('when the price changed after the payer opened checkout, then the payment is refused', async () => {
    const link = await createLink(t, key);
    const p = new Payer(t);
    await p.get(pathOf(link.url));
    const started = await p.post(pathOf(link.url), {});
    const session = /\/(cs_[0-9a-z]+)/.exec(started.location!)![1]!;
    await p.get(pathOf(started.location!));
    await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body: { amount: 9900 } });
    const answer = await p.pay(session);
    expect(answer.status).toBe(409);
    expect(answer.html).toContain('price on this payment link has changed');
  });
});

describe('the public page', () => {
  it('when the link collects fields, then they are labelled Name, Email and Phone, and the form requires them', async () => {
    const link = await createLink(t, key, { collect_name: true, collect_email: true, collect_phone: true, installment_enabled: true, description: 'Front row' });
    const p = new Payer(t);
    const page = await p.get(pathOf(link.url));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.html).not.toContain('Concert ticket'); // the link's name is internal (issue 14)
    // A link offering installments: "Pay in full" and its plan, every amount and date (the old promise "Installments available" is gone).
    for (const text of ['Front row', '$25.00', '>Name</label>', '>Email</label>', '>Phone</label>', 'Pay in full', '3 monthly payments', '$8.34', 'I authorise']) {
      expect(page.html).toContain(text);
    }
    const bad = await p.post(pathOf(link.url), { name: '', email: 'nope', phone: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.html.match(/aria-invalid="true"/g)).toHaveLength(3);
    expect(await t.sql`select 1 from checkout_sessions where payment_link_id = ${link.id}`).toHaveLength(0);
  });

  it('when a link collects nothing, then the page shows no payer fields', async () => {
    const link = await createLink(t, key, { amount: 1500, currency: 'jpy' });
    const page = await new Payer(t).get(pathOf(link.url));
    expect(page.html).toContain('¥1,500');
    expect(page.html).not.toMatch(/name="(name|email|phone)"/);
  });

  it('when the form is posted without the CSRF token or from another site, then no session is created', async () => {
    const link = await createLink(t, key);
    const p = new Payer(t);
    await p.get(pathOf(link.url));
    const forged = await p.post(pathOf(link.url), { _csrf: 'forged' });
    expect(forged.status).toBe(403);
    const noCookie = await fetch(`${t.url}${pathOf(link.url)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `_csrf=${encodeURIComponent(p.token)}`,
      redirect: 'manual',
    });
    expect(noCookie.status).toBe(403);
    expect(await t.sql`select 1 from checkout_sessions where payment_link_id = ${link.id}`).toHaveLength(0);
  });

  it.each([
    ['cancelled', { status: 'CANCELLED' }, 'deactivated by the merchant'],
    ['expired', null, 'This payment link has expired'],
  ])('when the link is %s, then the page says so with no form and a post opens no session', async (_name, body, message) => {
    const link = await createLink(t, key);
    const p = new Payer(t);
    await p.get(pathOf(link.url));
    if (body) await t.request('PATCH', `/v1/payment-links/${link.id}`, { key, body });
    else await t.sql`update payment_links set expires_at = now() - interval '1 second' where id = ${link.id}`;
    const page = await p.get(pathOf(link.url));
    expect(page.html).toContain(message);
    expect(page.html).not.toContain('<form');
    const post = await p.post(pathOf(link.url), {});
    expect(post.status).toBe(409);
    expect(await t.sql`select 1 from checkout_sessions where payment_link_id = ${link.id}`).toHaveLength(0);
  });

  it('when the path names no link, then it answers a 404 page', async () => {
    const res = await fetch(`${t.url}/l/no-such-link`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Payment link not found');
  });

  it('when ?src is one of the sources, then the view records it; anything else counts as DIRECT', async () => {
    const link = await createLink(t, key);
    for (const src of ['EMBED', 'whatsapp', 'bogus', '']) await fetch(`${link.url}?src=${src}`);
    await eventually(async () => (await linkRow(link.id)).view_count === 4);
    const rows = await t.sql`select source, sum(views)::int as n from payment_link_views where payment_link_id = ${link.id} group by 1 order by 1`;
    expect(rows).toEqual([
      { source: 'DIRECT', n: 2 },
      { source: 'EMBED', n: 1 },
      { source: 'WHATSAPP', n: 1 },
    ]);
  });
});
