import { newId } from '../../src/lib/ids.ts';
import { createSession } from '../checkout/helpers.ts';
import { Payer } from '../helpers/payer.ts';
import { FormClient, type Answer } from '../helpers/form-client.ts';
import type { TestServer } from '../helpers/server.ts';

export type { Answer } from '../helpers/form-client.ts';

/** A customer's browser without a browser (FormClient): the CSRF cookie and the portal session. */
export class PortalClient extends FormClient {
  post(path: string, form: Record<string, string> = {}) {
    return this.send('POST', path, { _csrf: this.token, ...form });
  }

  /** Opens the portal's page, then asks for a sign-in link for `email`. */
  async askForLink(accountId: string, email: string, mode?: 'test'): Promise<Answer> {
    await this.get(`/portal/${accountId}${mode ? '?mode=test' : ''}`);
    return this.post(`/portal/${accountId}`, { email, ...(mode ? { mode } : {}) });
  }

  /** Follows a sign-in link (an absolute URL): the 303 to the overview with the session cookie. */
  async follow(url: string): Promise<Answer> {
    const u = new URL(url);
    return this.get(u.pathname + u.search);
  }
}

/** A customer made through the API. */
export async function createCustomer(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/v1/customers', { key, body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', ...body } });
  if (res.status !== 200) throw new Error(`create customer: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; email: string; livemode: boolean };
}

/** A payment of the customer, paid on the hosted checkout (test mode); answers its id and session. */
export async function paidPayment(t: TestServer, key: string, customerId: string, body: Record<string, unknown> = {}, card = '4242 4242 4242 4242') {
  const cs = await createSession(t, key, { customer_id: customerId, ...body });
  const paid = await new Payer(t).pay(cs.id, { card_number: card });
  if (paid.status !== 303) throw new Error(`pay: ${paid.status}`);
  const [row] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs.id} order by id desc limit 1`;
  return { id: row!.id, sessionId: cs.id as string };
}

/** A live-mode payment row for the customer (live payments need Stripe, so it is written as the processor's answer would be). */
export async function livePayment(t: TestServer, accountId: string, customerId: string, amount = 4200) {
  const id = newId('pay');
  const [row] = await t.sql<{ id: string }[]>`
    insert into payments (id, account_id, livemode, status, amount_cents, currency, customer_id, card_brand, card_last4, description, succeeded_at)
    values (${id}, ${accountId}, true, 'SUCCEEDED', ${amount}, 'usd', ${customerId}, 'visa', '4242', 'Live order', now())
    returning id`;
  return row!.id;
}

/** An invoice of the customer, created and sent through the API. */
export async function sentInvoice(t: TestServer, key: string, customerId: string, body: Record<string, unknown> = {}) {
  const created = await t.request('POST', '/v1/invoices', {
    key,
    body: { customer_id: customerId, currency: 'usd', description: 'Consulting, March', line_items: [{ name: 'Design review', quantity: 2, amount: 3000 }], ...body },
  });
  if (created.status !== 200) throw new Error(`create invoice: ${created.status} ${JSON.stringify(created.body)}`);
  const sent = await t.request('POST', `/v1/invoices/${created.body.id}/send`, { key });
  if (sent.status !== 200) throw new Error(`send invoice: ${sent.status} ${JSON.stringify(sent.body)}`);
  return sent.body as { id: string; number: string; hosted_invoice_url: string; invoice_pdf: string };
}

/** A one-time portal link made by the merchant (POST /v1/customers/:id/portal-sessions). */
export async function merchantLink(t: TestServer, key: string, customerId: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', `/v1/customers/${customerId}/portal-sessions`, { key, body });
  if (res.status !== 200) throw new Error(`portal session: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { url: string; expires_at: number; customer_id: string; livemode: boolean; return_url: string | null };
}

/** A client signed in to the customer's portal through a merchant link. */
export async function signedIn(t: TestServer, key: string, customerId: string, headers: Record<string, string> = {}): Promise<PortalClient> {
  const c = new PortalClient(t, headers);
  const res = await c.follow((await merchantLink(t, key, customerId)).url);
  if (res.status !== 303) throw new Error(`sign-in: ${res.status}`);
  return c;
}

/** The text a person reads on a page: tags, the CSRF token and whitespace left out. */
export const pageText = (html: string) =>
  html
    .replace(/<head>[\s\S]*<\/head>/, '')
    .replace(/<input type="hidden" name="_csrf" value="[^"]*">/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replaceAll('&#39;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')
    .replace(/\s+/g, ' ')
    .trim();
