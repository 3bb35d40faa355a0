import { CARDS } from './cards.ts';
import { Payer } from './payer.ts';
import { startReceiver, type Behaviour, type Receiver } from './receiver.ts';
import type { TestServer } from './server.ts';
import { eventually } from './wait.ts';

/**
 * Records made the way a merchant and a payer make them (the API, the hosted pages), one shape
 * each, every one making the parents it needs unless it is given them. A test about something
 * else seeds through these; a test about the API calls the API itself.
 */

export const SUCCESS_URL = 'https://merchant.example/thanks?session={CHECKOUT_SESSION_ID}';

const created = <T>(what: string, res: { status: number; body: T }): T => {
  if (res.status !== 200) throw new Error(`create ${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

/** A checkout session ($19.99 unless `body` says otherwise). */
export async function createSession(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  return created('session', await t.request('POST', '/v1/checkout/sessions', { key, body: { amount: 1999, currency: 'usd', success_url: SUCCESS_URL, ...body } }));
}

/** The order the browser tests pay (two items, $49.00), returning to `merchantUrl`. */
export const teaRoomOrder = (merchantUrl: string) => ({
  success_url: `${merchantUrl}/success?session={CHECKOUT_SESSION_ID}`,
  line_items: [
    { name: 'Loose-leaf green tea, 100 g', quantity: 2, amount: 850 },
    { name: 'Ceramic teapot', quantity: 1, amount: 3200 },
  ],
  amount: undefined,
  description: 'Order #1042 from the Tea Room',
});

/** A payment link ($25.00, "Concert ticket" unless `body` says otherwise). */
export async function createLink(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  return created('link', await t.request('POST', '/v1/payment-links', { key, body: { amount: 2500, currency: 'usd', name: 'Concert ticket', ...body } }));
}

/** A payment link offering installments ($100.00 in three months, or in full). */
export async function createInstallmentLink(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  return created(
    'link',
    await t.request('POST', '/v1/payment-links', {
      key,
      body: { amount: 10000, currency: 'usd', name: 'Course', description: 'Pottery course', installment_enabled: true, ...body },
    }),
  );
}

/** A customer made through the API (Ada Lovelace). */
export async function createCustomer(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  return created(
    'customer',
    await t.request('POST', '/v1/customers', { key, body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', ...body } }),
  ) as { id: string; email: string; livemode: boolean; [field: string]: unknown };
}

/** What the customer of an invoice carries besides the defaults: notes set on purpose, as they must never reach a page, a PDF or an email. */
export const BILLED_CUSTOMER = { company_name: 'Analytical Engines Ltd', notes: 'SECRET-NOTE do not show' };

/**
 * An invoice created through the API and sent (its hosted page is live): 2 × $30.00 + $40.00 =
 * $100.00, due in 14 days, unless `body` says otherwise; for a new customer (BILLED_CUSTOMER)
 * unless `body.customer_id` is given.
 */
export async function sentInvoice(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const customer = body.customer_id ? null : await createCustomer(t, key, BILLED_CUSTOMER);
  const invoice = created(
    'invoice',
    await t.request('POST', '/v1/invoices', {
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
    }),
  );
  const sent = await t.request('POST', `/v1/invoices/${invoice.id}/send`, { key });
  if (sent.status !== 200) throw new Error(`send invoice: ${sent.status} ${JSON.stringify(sent.body)}`);
  return sent.body;
}

/**
 * A payment paid on the hosted checkout like a payer would, with `card` (4242 unless given): the
 * rest of `body` is the session's ($19.99 unless it says otherwise; `customer_id` for a
 * customer's). Answers the payment's and the session's ids; throws unless the session completed.
 */
export async function paidPayment(t: TestServer, key: string, body: Record<string, unknown> & { card?: string } = {}) {
  const { card = CARDS.visa, ...session } = body;
  const cs = await createSession(t, key, session);
  const res = await new Payer(t).pay(cs.id, { card_number: card });
  if (res.status !== 303) throw new Error(`pay: ${res.status} ${res.html.slice(0, 300)}`);
  const paid = (await t.request('GET', `/v1/checkout/sessions/${cs.id}`, { key })).body;
  if (paid.status !== 'COMPLETE') throw new Error(`session ${cs.id} is ${paid.status}`);
  return { paymentId: paid.payment_id as string, sessionId: cs.id as string };
}

/** The dispute of a payment, once the service has learnt of it (the test server needs its workers). */
export async function disputeOf(t: TestServer, key: string, paymentId: string, timeoutMs = 15_000) {
  return eventually(async () => {
    const res = await t.request('GET', `/v1/disputes?payment_id=${paymentId}`, { key });
    return res.body.data?.[0];
  }, timeoutMs);
}

/** A payment made with the disputed card, and its dispute. */
export async function disputed(t: TestServer, key: string, amount = 1999) {
  const { paymentId } = await paidPayment(t, key, { amount, card: CARDS.disputed });
  return { paymentId, dispute: await disputeOf(t, key, paymentId) };
}

export interface Endpoint {
  id: string;
  signing_secret: string;
  url: string;
  livemode: boolean;
  [field: string]: unknown;
}

/** A webhook endpoint of every event type unless `body` says otherwise. */
export async function createEndpoint(t: TestServer, key: string, body: Record<string, unknown>) {
  return created('endpoint', await t.request('POST', '/v1/webhook-endpoints', { key, body: { enabled_events: ['*'], ...body } })) as Endpoint;
}

/**
 * A webhook endpoint at a receiver of its own (started here, or `receiver` when given): close the
 * receiver when done, or pass one from `useReceiver`. The test server needs WEBHOOK_TEST_LOCAL_TARGETS
 * or WEBHOOK_ALLOW_INSECURE_TARGETS for a local URL.
 */
export async function endpointWithReceiver(
  t: TestServer,
  key: string,
  opts: { body?: Record<string, unknown>; receiver?: Receiver; behaviour?: Behaviour; path?: string } = {},
): Promise<{ endpoint: Endpoint; receiver: Receiver }> {
  const receiver = opts.receiver ?? (await startReceiver(opts.behaviour));
  const endpoint = await createEndpoint(t, key, { url: `${receiver.url}${opts.path ?? '/hook'}`, ...opts.body });
  return { endpoint, receiver };
}
