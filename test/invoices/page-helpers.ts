import { Payer, pathOf } from '../helpers/payer.ts';
import type { TestServer } from '../helpers/server.ts';

/** A customer to bill (notes set on purpose: they must never reach a page, a PDF or an email). */
export async function createCustomer(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/v1/customers', {
    key,
    body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', company_name: 'Analytical Engines Ltd', notes: 'SECRET-NOTE do not show', ...body },
  });
  if (res.status !== 200) throw new Error(`create customer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** An invoice created through the API and sent (its hosted page is live): 2 × $30.00 + $40.00 = $100.00 unless `body` says otherwise. */
export async function sentInvoice(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const customer = body.customer_id ? null : await createCustomer(t, key);
  const created = await t.request('POST', '/v1/invoices', {
    key,
    body: {
      customer_id: customer?.id,
      currency: 'usd',
      description: 'Consulting, March',
      due_date: Math.floor(Date.now() / 1000) + 14 * 86400,
      line_items: [
        { name: 'Design review', quantity: 2, amount: 3000 },
        { name: 'Workshop', quantity: 1, amount: 4000 },
      ],
      ...body,
    },
  });
  if (created.status !== 200) throw new Error(`create invoice: ${created.status} ${JSON.stringify(created.body)}`);
  const sent = await t.request('POST', `/v1/invoices/${created.body.id}/send`, { key });
  if (sent.status !== 200) throw new Error(`send invoice: ${sent.status} ${JSON.stringify(sent.body)}`);
  return sent.body;
}

export const invoiceRow = async (t: TestServer, id: string) => (await t.sql`select * from invoices where id = ${id}`)[0]!;

/** The session id in a checkout URL. */
export const sessionOf = (location: string) => /\/(cs_[0-9A-Za-z]+)/.exec(location)![1]!;

/**
 * A payer on the invoice page: opens it, posts the Pay form (with `amount` for a partial payment)
 * and, on a 303 to the checkout, opens the checkout page. Answers the payer, the post's answer and
 * the session id (null when the post was refused).
 */
export async function startPayment(t: TestServer, url: string, amount?: string) {
  const payer = new Payer(t);
  const page = await payer.get(pathOf(url));
  if (page.status !== 200) throw new Error(`invoice page: ${page.status}`);
  const posted = await payer.post(`${pathOf(url)}/pay`, amount === undefined ? {} : { amount });
  if (posted.status !== 303) return { payer, posted, sessionId: null };
  const sessionId = sessionOf(posted.location!);
  await payer.get(pathOf(posted.location!));
  return { payer, posted, sessionId };
}

/** startPayment, then the card (4242 unless given) on the hosted checkout. */
export async function payInvoice(t: TestServer, url: string, amount?: string, card: Record<string, string> = {}) {
  const started = await startPayment(t, url, amount);
  if (!started.sessionId) throw new Error(`pay form: ${started.posted.status} ${started.posted.html.slice(0, 400)}`);
  const paid = await started.payer.pay(started.sessionId, card);
  return { ...started, paid };
}
