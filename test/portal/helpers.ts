import { newId } from '../../src/lib/ids.ts';
import type { TestServer } from '../helpers/server.ts';

export { createCustomer } from '../helpers/factories.ts';
export { merchantLink, pageText, PortalClient, signedIn, type Answer } from '../helpers/portal-client.ts';

/** A live-mode payment row for the customer (live payments need Stripe, so it is written as the processor's answer would be). */
export async function livePayment(t: TestServer, accountId: string, customerId: string, amount = 4200) {
  const id = newId('pay');
  const [row] = await t.sql<{ id: string }[]>`
    insert into payments (id, account_id, livemode, status, amount_cents, currency, customer_id, card_brand, card_last4, description, succeeded_at)
    values (${id}, ${accountId}, true, 'SUCCEEDED', ${amount}, 'usd', ${customerId}, 'visa', '4242', 'Live order', now())
    returning id`;
  return row!.id;
}
