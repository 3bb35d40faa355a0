import fc from 'fast-check';
import { beforeAll, describe, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../src/lib/errors.ts';
import { syncNewDisputes } from '../../src/disputes/service.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { encode, hostileBody, hostileParams, idSegment, NUMBER_EDGES, NUMBER_TEXT_EDGES, paramsText, TEXT_EDGES } from './hostile.ts';
import { pathOf, Payer, payInvoice, sessionOf } from '../helpers/payer.ts';
import { startCardUpdate } from '../../src/installments/service.ts';
import { createLink, createSession } from '../helpers/factories.ts';
import { startPlan } from '../helpers/plans.ts';
import { PortalClient } from '../helpers/portal-client.ts';
import { CARDS } from '../helpers/cards.ts';

/**
 * Property: whatever a client sends to any endpoint or hosted page, the answer is not a 5xx, comes
 * within ANSWER_MS, and on /v1 every error is the one error shape with a Request-Id. A fixed seed
 * keeps runs repeatable; FUZZ_SEED and FUZZ_RUNS override it (fast-check prints the seed and
 * the failing request on failure). Bounded (issue 24, point 5): 25 runs per route by default, three
 * times that where a route takes a body, and each field of the edge sweep gets EDGES_PER_FIELD of
 * the edge values drawn from the seed (another FUZZ_SEED draws others); the nightly depth is
 * FUZZ_ALL=1 FUZZ_RUNS=100 (every edge value in every field).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 90006);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const ALL = process.env.FUZZ_ALL === '1';
const EDGES_PER_FIELD = 6;
console.info(`no-5xx: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}${ALL ? ' FUZZ_ALL=1' : ''}`);
/**
 * The edge values a field gets: every one with FUZZ_ALL=1, else the `always` ones (NUL, a lone
 * surrogate) and the rest of EDGES_PER_FIELD drawn from the seed.
 */
function edgesFor<T>(values: T[], always: T[], draw: number): T[] {
  if (ALL) return values;
  const rest = values.filter((v) => !always.includes(v));
  const n = EDGES_PER_FIELD - always.length;
  const [picked] = fc.sample(fc.shuffledSubarray(rest, { minLength: n, maxLength: n }), { seed: SEED + draw, numRuns: 1 });
  return [...always, ...picked!];
}
const ANSWER_MS = 5_000;

interface Route {
  method: string;
  /** `:id` is replaced by a generated segment (mostly one of `ids`). */
  path: string;
  ids?: () => string[];
  /** A valid body (JSON on /v1, a form on the hosted pages); none for reads. */
  body?: () => Record<string, unknown>;
  fields?: string[];
  query?: () => Record<string, string>;
  params?: string[];
  /** Hosted-page forms carry the CSRF cookie and token of this payer. */
  payer?: () => Payer;
  /** Called with the live key (the account settings refuse a test key before reading anything). */
  live?: boolean;
}

const t = useTestServer({
  // The card-testing limits would answer 429 before the form checks this test is after.
  env: {
    RATE_LIMIT_LINK_SESSIONS_PER_HOUR: '1000000',
    RATE_LIMIT_PAY_PER_CLIENT_PER_HOUR: '1000000',
    RATE_LIMIT_PAY_PER_SESSION_PER_HOUR: '1000000',
    // Likewise the portal's sign-in limits (issue 16) before its form checks.
    PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: '0',
    PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: '0',
  },
});
let key: string;
let liveKey: string;
const fx: Record<string, string> = {};
const sessionId = async (body?: Record<string, unknown>) => (await createSession(t, key, body)).id as string;
const payers: Record<string, Payer> = {};

beforeAll(async () => {
  ({ test: key, live: liveKey } = await t.account());
  const post = async (path: string, body: unknown, as = key) => {
    const res = await t.request('POST', path, { key: as, body });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };
  fx.cus = await post('/v1/customers', { email: 'fuzz@example.com' });
  fx.cusGone = await post('/v1/customers', { email: 'gone@example.com' });
  fx.we = await post('/v1/webhook-endpoints', { url: 'https://example.com/hook', enabled_events: ['*'] });
  fx.weGone = await post('/v1/webhook-endpoints', { url: 'https://example.com/gone', enabled_events: ['*'] });
  const link = await createLink(t, key, { slug: 'fuzz-link', collect_name: true, collect_email: true, collect_phone: true });
  fx.pl = link.id;
  fx.cs = await sessionId({ customer_id: fx.cus, line_items: [{ name: 'Tea', quantity: 2, amount: 500 }], amount: undefined });
  fx.csExpire = await sessionId();
  fx.csPage = await sessionId();
  const cs3ds = (fx.cs3ds = await sessionId());

  payers.page = new Payer(t);
  await payers.page.get(`/checkout/${fx.csPage}`);
  payers.challenge = new Payer(t);
  const challenged = await payers.challenge.pay(cs3ds, { card_number: CARDS.threeDS });
  fx.pay = /payment=(pay_[0-9a-z]+)/.exec(challenged.location ?? '')?.[1] ?? '';
  if (!fx.pay) throw new Error(`no 3-D Secure challenge: ${challenged.status}`);
  await payers.challenge.get(`/checkout/${fx.cs3ds}/authenticate?payment=${fx.pay}`);
  payers.link = new Payer(t);
  await payers.link.get(pathOf(link.url));

  const paid = await sessionId();
  await new Payer(t).pay(paid, { card_number: CARDS.visa });
  const [payment] = await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${paid}`;
  fx.paid = payment!.id;
  fx.re = await post('/v1/refunds', { payment_id: fx.paid, amount: 100 });
  fx.reCancel = await post('/v1/refunds', { payment_id: fx.paid, amount: 100 });

  // Two disputed payments (card 0259): no workers run here, so the sync is called once they are a second old.
  const disputedPayments: string[] = [];
  for (let i = 0; i < 2; i++) {
    const cs = await sessionId();
    await new Payer(t).pay(cs, { card_number: CARDS.disputed });
    disputedPayments.push((await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${cs}`)[0]!.id);
  }
  await eventually(async () => (await syncNewDisputes(t.s, t.s.log), (await t.sql`select 1 from disputes`).length === 2));
  const [dp, dpClose] = await t.sql<{ id: string }[]>`select id from disputes order by payment_id`;
  fx.dp = dp!.id;
  fx.dpClose = dpClose!.id;
  await post(`/v1/checkout/sessions/${await sessionId()}/expire`, {}); // an event, with deliveries to resend
  const events = await t.request('GET', '/v1/events?limit=1', { key });
  fx.evt = events.body.data[0].id;

  // Invoices (issue 13): one invoice for each route that changes one (the second id of those routes is
  // a PAID invoice, which each refuses), and sent ones for the hosted pages, which no fuzzed route changes.
  await post('/v1/account', { business_name: 'Fuzz & Co' }, liveKey);
  const draft = (body: Record<string, unknown> = {}) => post('/v1/invoices', { ...invoice(), ...body });
  const sent = async (body: Record<string, unknown> = {}) => {
    const id = await draft(body);
    const res = await t.request('POST', `/v1/invoices/${id}/send`, { key });
    if (res.status !== 200) throw new Error(`send ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    return { id, url: res.body.hosted_invoice_url as string, token: pathOf(res.body.hosted_invoice_url).split('/').pop()! };
  };
  fx.in = await draft();
  fx.inGone = await draft();
  fx.inFinalize = await draft();
  fx.inSend = await draft();
  fx.inVoid = await post(`/v1/invoices/${await draft()}/finalize`, {});
  fx.inUncollectible = await post(`/v1/invoices/${await draft()}/finalize`, {});
  const partial = await sent({ allow_partial_payments: true, minimum_payment_cents: 500 });
  fx.inPartial = partial.id;
  fx.tok = partial.token;
  const voided = await sent();
  await post(`/v1/invoices/${voided.id}/void`, {});
  fx.tokVoid = voided.token;
  const paidInvoice = await sent({ allow_partial_payments: false, minimum_payment_cents: null });
  if ((await payInvoice(t, paidInvoice.url)).paid.status !== 303) throw new Error('invoice not paid');
  fx.tokPaid = paidInvoice.token;
  fx.inPaid = paidInvoice.id;
  payers.invoice = new Payer(t);
  await payers.invoice.get(pathOf(partial.url));
  const opened = await payers.invoice.post(`${pathOf(partial.url)}/pay`, { amount: '20.00' });
  if (opened.status !== 303) throw new Error(`invoice pay form: ${opened.status}`);
  fx.csInvoice = sessionOf(opened.location!);
  const emails = await t.request('GET', '/v1/emails?limit=1', { key });
  fx.em = emails.body.data[0].id;

  // Test helpers (issue 15): a session to pay, one to expire, a payment to dispute. (advance-time is
  // left out: its edge values would expire the sessions the hosted-page routes are fuzzed on.)
  fx.csHelper = await sessionId();
  fx.csHelperExpire = await sessionId();
  const toDispute = await sessionId();
  await new Payer(t).pay(toDispute, { card_number: CARDS.visa });
  fx.payDispute = (await t.sql<{ id: string }[]>`select id from payments where checkout_session_id = ${toDispute}`)[0]!.id;

  // Installment plans (issue 16): a link offering them (its page's plan form), an ACTIVE plan to read
  // and one to cancel, a sent invoice offering them (its pay form), and a card-update (setup) session.
  const planLink = await createLink(t, key, { slug: 'fuzz-plans', installment_enabled: true, installment_options: [{ count: 3, interval: 'month' }] });
  fx.plPlans = planLink.id;
  fx.ip = (await startPlan(t, planLink.url)).plan!.id as string;
  fx.ipCancel = (await startPlan(t, planLink.url)).plan!.id as string;
  payers.planLink = new Payer(t);
  await payers.planLink.get(pathOf(planLink.url));
  const plansInvoice = await sent({ allow_installments: true, allow_partial_payments: false, minimum_payment_cents: null });
  fx.tokPlans = plansInvoice.token;
  payers.planInvoice = new Payer(t);
  await payers.planInvoice.get(pathOf(plansInvoice.url));
  const planOwner = { accountId: (await t.sql<{ account_id: string }[]>`select account_id from payment_links where id = ${planLink.id}`)[0]!.account_id, livemode: false };
  fx.csSetup = (await startCardUpdate(t.s, planOwner, fx.ip, 'https://merchant.example/account')).session.id;
  payers.setup = new Payer(t);
  await payers.setup.get(`/checkout/${fx.csSetup}`);

  // Keys (issue 14): keys other than the calling one, to roll and to revoke.
  fx.key = await post('/v1/api-keys', {});
  fx.keyRoll = await post('/v1/api-keys', {});
  fx.keyRevoke = await post('/v1/api-keys', {});

  // The customer portal (issue 16): fx.cus's account, a payment and an invoice of fx.cus, a one-time
  // link, a signed-out form, a signed-in session and one to sign out (a browser's cookies and token).
  fx.acct = (await t.sql<{ account_id: string }[]>`select account_id from customers where id = ${fx.cus}`)[0]!.account_id;
  fx.payPortal = (await t.sql<{ id: string }[]>`select id from payments where customer_id = ${fx.cus} and status = 'SUCCEEDED' limit 1`)[0]!.id;
  const portalLink = async () => (await t.request('POST', `/v1/customers/${fx.cus}/portal-sessions`, { key, body: {} })).body.url as string;
  fx.portalToken = new URL(await portalLink()).searchParams.get('token')!;
  const portalPayer = async (signIn: boolean) => {
    const c = new PortalClient(t);
    if (signIn) await c.follow(await portalLink());
    await c.get(`/portal/${fx.acct}`);
    const payer = new Payer(t);
    payer.cookie = c.cookieHeader;
    payer.token = c.token;
    return payer;
  };
  payers.portalOut = await portalPayer(false);
  payers.portalIn = await portalPayer(true);
  payers.portalSignOut = await portalPayer(true);
});

const ids = (...names: string[]) => () => names.map((n) => fx[n]!);
const listParams = ['limit', 'starting_after', 'ending_before'];
const inADay = () => Math.floor(Date.now() / 1000) + 86_400;
const session = () => ({ amount: 1999, currency: 'usd', success_url: 'https://merchant.example/ok', expires_at: inADay() - 3600 });
const sessionFields = ['amount', 'currency', 'success_url', 'cancel_url', 'line_items', 'customer_id', 'customer_email', 'description', 'metadata', 'expires_at'];
const linkFields = ['amount', 'currency', 'type', 'name', 'slug', 'description', 'customer_id', 'collect_name', 'collect_email', 'collect_phone', 'installment_enabled', 'installment_options', 'quantity_limit', 'expires_at', 'metadata', 'status'];
const customerFields = ['email', 'first_name', 'last_name', 'phone', 'company_name', 'notes', 'metadata'];
const endpointFields = ['url', 'enabled_events', 'description', 'is_active'];
const invoiceFields = ['customer_id', 'currency', 'line_items', 'description', 'due_date', 'allow_partial_payments', 'minimum_payment_cents', 'allow_installments', 'installment_options', 'metadata'];
const invoice = () => ({
  customer_id: fx.cus!,
  currency: 'usd',
  line_items: [{ name: 'Tea', quantity: 2, amount: 2500 }, { name: 'Cake', quantity: 1, amount: 5000 }],
  description: 'March',
  due_date: inADay() + 86_400 * 13,
  allow_partial_payments: true,
  minimum_payment_cents: 1000,
  metadata: { order: '42' },
});
/** A token of the hosted-page shape that is no invoice's. */
const NO_TOKEN = 'A'.repeat(32);
const cardForm = { email: 'payer@example.com', name: 'Ada Lovelace', card_number: CARDS.declined, expiry: '12/34', cvc: '123' };

// Every route of src/*/routes.ts, src/checkout/pages.ts, src/payment-links/pages.ts and src/invoices/pages.ts.
const API: Route[] = [
  { method: 'GET', path: '/v1/account' },
  { method: 'POST', path: '/v1/customers', body: () => ({ email: 'a@b.co', first_name: 'Ada' }), fields: customerFields },
  { method: 'GET', path: '/v1/customers', query: () => ({ limit: '2', email: 'fuzz@example.com' }), params: [...listParams, 'email'] },
  { method: 'GET', path: '/v1/customers/:id', ids: ids('cus') },
  { method: 'PATCH', path: '/v1/customers/:id', ids: ids('cus'), body: () => ({ first_name: 'Grace' }), fields: customerFields },
  { method: 'DELETE', path: '/v1/customers/:id', ids: ids('cusGone') },
  { method: 'POST', path: '/v1/payment-links', body: () => ({ amount: 2500, currency: 'usd', name: 'Ticket', quantity_limit: 5, expires_at: inADay() }), fields: linkFields },
  { method: 'GET', path: '/v1/payment-links', query: () => ({ limit: '3', status: 'ACTIVE' }), params: [...listParams, 'status', 'type'] },
  { method: 'GET', path: '/v1/payment-links/:id', ids: ids('pl') },
  { method: 'PATCH', path: '/v1/payment-links/:id', ids: ids('pl'), body: () => ({ description: 'Row A', expires_at: inADay(), quantity_limit: 50 }), fields: linkFields },
  { method: 'GET', path: '/v1/payment-links/:id/analytics', ids: ids('pl') },
  { method: 'POST', path: '/v1/checkout/sessions', body: session, fields: sessionFields },
  { method: 'GET', path: '/v1/checkout/sessions', query: () => ({ limit: '2', status: 'OPEN' }), params: [...listParams, 'status', 'customer_id'] },
  { method: 'GET', path: '/v1/checkout/sessions/:id', ids: ids('cs') },
  { method: 'POST', path: '/v1/checkout/sessions/:id/expire', ids: ids('csExpire'), body: () => ({}), fields: ['reason'] },
  { method: 'GET', path: '/v1/payments', query: () => ({ limit: '2', status: 'PENDING' }), params: [...listParams, 'status', 'customer'] },
  { method: 'GET', path: '/v1/payments/:id', ids: ids('pay') },
  { method: 'POST', path: '/v1/refunds', body: () => ({ payment_id: fx.paid!, amount: 1, reason: 'duplicate', metadata: { a: 'b' } }), fields: ['payment_id', 'amount', 'reason', 'metadata'] },
  { method: 'GET', path: '/v1/refunds', query: () => ({ limit: '2', payment_id: fx.paid! }), params: [...listParams, 'payment_id'] },
  { method: 'GET', path: '/v1/refunds/:id', ids: ids('re') },
  { method: 'POST', path: '/v1/refunds/:id/cancel', ids: ids('reCancel', 're'), body: () => ({}), fields: ['x'] },
  { method: 'POST', path: '/v1/webhook-endpoints', body: () => ({ url: 'https://example.com/h', enabled_events: ['payment.succeeded'] }), fields: endpointFields },
  { method: 'GET', path: '/v1/webhook-endpoints', query: () => ({ limit: '1' }), params: listParams },
  { method: 'GET', path: '/v1/webhook-endpoints/:id', ids: ids('we') },
  { method: 'PATCH', path: '/v1/webhook-endpoints/:id', ids: ids('we'), body: () => ({ description: 'main' }), fields: endpointFields },
  { method: 'DELETE', path: '/v1/webhook-endpoints/:id', ids: ids('weGone') },
  { method: 'POST', path: '/v1/webhook-endpoints/:id/rotate-secret', ids: ids('we'), body: () => ({}), fields: ['expires_in'] },
  { method: 'GET', path: '/v1/events', query: () => ({ limit: '2', 'created[gte]': '0', 'created[lte]': '253402300799' }), params: [...listParams, 'type', 'created[gte]', 'created[lte]'] },
  { method: 'GET', path: '/v1/events/:id', ids: ids('evt') },
  { method: 'GET', path: '/v1/events/:id/deliveries', ids: ids('evt'), query: () => ({ limit: '1' }), params: listParams },
  { method: 'POST', path: '/v1/events/:id/resend', ids: ids('evt'), body: () => ({ endpoint_id: fx.we }), fields: ['endpoint_id'] },
  { method: 'GET', path: '/v1/event-types' },
  { method: 'GET', path: '/v1/disputes', query: () => ({ limit: '2', status: 'NEEDS_RESPONSE', payment_id: 'pay_x' }), params: [...listParams, 'status', 'payment_id'] },
  { method: 'GET', path: '/v1/disputes/:id', ids: ids('dp') },
  { method: 'PATCH', path: '/v1/disputes/:id', ids: ids('dp'), body: () => ({ evidence: { product_description: 'Mug', uncategorized_text: 'x' } }), fields: ['evidence', 'submit'] },
  { method: 'POST', path: '/v1/disputes/:id/close', ids: ids('dpClose'), body: () => ({}), fields: ['x'] },
  { method: 'POST', path: '/v1/account', body: () => ({ business_name: 'Fuzz & Co' }), fields: ['business_name'], live: true },
  { method: 'POST', path: '/v1/invoices', body: invoice, fields: invoiceFields },
  { method: 'GET', path: '/v1/invoices', query: () => ({ limit: '2', status: 'OPEN', customer_id: fx.cus! }), params: [...listParams, 'status', 'customer_id', 'customer'] },
  { method: 'GET', path: '/v1/invoices/:id', ids: ids('in', 'inPartial') },
  { method: 'PATCH', path: '/v1/invoices/:id', ids: ids('in', 'inPaid'), body: () => ({ description: 'April', line_items: [{ name: 'Tea', quantity: 3, amount: 2500 }], due_date: inADay() }), fields: invoiceFields },
  { method: 'DELETE', path: '/v1/invoices/:id', ids: ids('inGone', 'inPaid') },
  { method: 'POST', path: '/v1/invoices/:id/finalize', ids: ids('inFinalize', 'inPaid'), body: () => ({}), fields: ['x'] },
  { method: 'POST', path: '/v1/invoices/:id/send', ids: ids('inSend', 'inPaid'), body: () => ({}), fields: ['x'] },
  { method: 'POST', path: '/v1/invoices/:id/void', ids: ids('inVoid', 'inPaid'), body: () => ({}), fields: ['x'] },
  { method: 'POST', path: '/v1/invoices/:id/mark-uncollectible', ids: ids('inUncollectible', 'inPaid'), body: () => ({}), fields: ['x'] },
  { method: 'GET', path: '/v1/emails', query: () => ({ limit: '2', status: 'PENDING', template: 'invoice', related_object: fx.inPartial!, to: 'fuzz@example.com' }), params: [...listParams, 'status', 'template', 'related_object', 'to'] },
  { method: 'GET', path: '/v1/emails/:id', ids: ids('em') },
  // Issue 14: keys, the account's branding, an endpoint's deliveries, retries and test events.
  { method: 'GET', path: '/v1/api-keys', query: () => ({ limit: '2' }), params: listParams },
  { method: 'POST', path: '/v1/api-keys', body: () => ({}), fields: ['x', 'expires_in'] },
  { method: 'GET', path: '/v1/api-keys/:id', ids: ids('key') },
  { method: 'POST', path: '/v1/api-keys/:id/roll', ids: ids('keyRoll', 'key'), body: () => ({ expires_in: 3600 }), fields: ['expires_in'] },
  { method: 'POST', path: '/v1/api-keys/:id/revoke', ids: ids('keyRevoke', 'key'), body: () => ({}), fields: ['x'] },
  { method: 'PATCH', path: '/v1/account', body: () => ({ support_email: 'help@fuzz.example', brand_color: '#0a7cff', logo_url: 'https://cdn.fuzz.example/logo.png' }), fields: ['business_name', 'support_email', 'brand_color', 'logo_url'], live: true },
  { method: 'GET', path: '/v1/webhook-endpoints/:id/deliveries', ids: ids('we'), query: () => ({ limit: '2', status: 'FAILED' }), params: [...listParams, 'status'] },
  { method: 'POST', path: '/v1/webhook-endpoints/:id/retry-failed', ids: ids('we'), body: () => ({ since: 0 }), fields: ['since'] },
  { method: 'POST', path: '/v1/webhook-endpoints/:id/test', ids: ids('we'), body: () => ({ type: 'payment.succeeded' }), fields: ['type'] },
  // Issue 15: the test helpers.
  { method: 'POST', path: '/v1/test-helpers/checkout/sessions/:id/pay', ids: ids('csHelper', 'cs'), body: () => ({ scenario: 'declined', email: 'a@b.co', name: 'Ada' }), fields: ['card', 'scenario', 'email', 'name'] },
  { method: 'POST', path: '/v1/test-helpers/checkout/sessions/:id/expire', ids: ids('csHelperExpire'), body: () => ({}), fields: ['x'] },
  { method: 'POST', path: '/v1/test-helpers/payments/:id/dispute', ids: ids('payDispute', 'pay'), body: () => ({ reason: 'duplicate' }), fields: ['reason'] },
  // Issue 16: installment plans.
  {
    method: 'GET',
    path: '/v1/installment-plans',
    query: () => ({ limit: '2', status: 'ACTIVE', payment_link_id: fx.plPlans!, customer: 'cus_x' }),
    params: [...listParams, 'status', 'customer', 'customer_id', 'payment_link_id', 'invoice_id'],
  },
  { method: 'GET', path: '/v1/installment-plans/:id', ids: ids('ip', 'ipCancel') },
  { method: 'PATCH', path: '/v1/installment-plans/:id', ids: ids('ip', 'ipCancel'), body: () => ({ metadata: { order: '1042' } }), fields: ['metadata'] },
  { method: 'POST', path: '/v1/installment-plans/:id/cancel', ids: ids('ipCancel', 'ip'), body: () => ({}), fields: ['x'] },
  // Issue 16: a customer portal link (it refuses Idempotency-Key, which half the requests carry).
  { method: 'POST', path: '/v1/customers/:id/portal-sessions', ids: ids('cus', 'cusGone'), body: () => ({ return_url: 'https://merchant.example/account' }), fields: ['return_url'] },
];

const PAGES: Route[] = [
  { method: 'GET', path: '/checkout/:id', ids: ids('csPage', 'cs3ds'), query: () => ({}), params: ['src', 'x'] },
  { method: 'POST', path: '/checkout/:id/pay', ids: ids('csPage'), payer: () => payers.page!, body: () => ({ ...cardForm }), fields: Object.keys(cardForm) },
  { method: 'GET', path: '/checkout/:id/authenticate', ids: ids('cs3ds'), query: () => ({ payment: fx.pay! }), params: ['payment'] },
  { method: 'POST', path: '/checkout/:id/authenticate', ids: ids('cs3ds'), payer: () => payers.challenge!, body: () => ({ payment: fx.pay!, outcome: 'x' }), fields: ['payment', 'outcome'] },
  { method: 'GET', path: '/checkout/:id/receipt', ids: ids('csPage') },
  { method: 'GET', path: '/l/:id', ids: () => [fx.pl!, 'fuzz-link'], query: () => ({ src: 'QR' }), params: ['src'] },
  { method: 'POST', path: '/l/:id', ids: () => ['fuzz-link', fx.pl!], payer: () => payers.link!, body: () => ({ src: 'QR', name: 'Ada', email: 'a@b.co', phone: '+1 415 555 0100' }), fields: ['src', 'name', 'email', 'phone'] },
  { method: 'GET', path: '/l/:id/paid', ids: () => ['fuzz-link'], query: () => ({ session: fx.cs! }), params: ['session'] },
  { method: 'GET', path: '/invoices/:id', ids: () => [fx.tok!, fx.tokPaid!, fx.tokVoid!, NO_TOKEN], query: () => ({ paid: fx.csInvoice! }), params: ['paid', 'x'] },
  { method: 'POST', path: '/invoices/:id/pay', ids: () => [fx.tok!, fx.tokPaid!, NO_TOKEN], payer: () => payers.invoice!, body: () => ({ amount: '10.00' }), fields: ['amount'] },
  { method: 'GET', path: '/invoices/:id/pdf', ids: () => [fx.tok!, fx.tokPaid!, fx.tokVoid!, NO_TOKEN] },
  // Issue 16: plans chosen on a link page and an invoice page; a card-update (setup) session of the checkout.
  { method: 'POST', path: '/l/:id', ids: () => ['fuzz-plans'], payer: () => payers.planLink!, body: () => ({ src: 'DIRECT', plan: '3-month', agree: 'yes', email: 'a@b.co' }), fields: ['src', 'plan', 'agree', 'email'] },
  { method: 'POST', path: '/invoices/:id/pay', ids: () => [fx.tokPlans!], payer: () => payers.planInvoice!, body: () => ({ plan: '3-month', agree: 'yes' }), fields: ['plan', 'agree', 'amount'] },
  { method: 'GET', path: '/checkout/:id', ids: ids('csSetup'), query: () => ({}), params: ['x'] },
  { method: 'POST', path: '/checkout/:id/pay', ids: ids('csSetup'), payer: () => payers.setup!, body: () => ({ ...cardForm }), fields: Object.keys(cardForm) },
  { method: 'GET', path: '/checkout/:id/authenticate', ids: ids('csSetup'), query: () => ({ setup: 'seti_x' }), params: ['setup'] },
  { method: 'POST', path: '/checkout/:id/authenticate', ids: ids('csSetup'), payer: () => payers.setup!, body: () => ({ setup: 'seti_x', outcome: 'x' }), fields: ['setup', 'outcome'] },
  // Issue 16: the customer portal, signed out (the account is the :id) and signed in (fx.acct in the path).
  { method: 'GET', path: '/portal/:id', ids: () => [fx.acct!, 'acct_00000000000000000000000000000'], query: () => ({ mode: 'test', signed_out: '1' }), params: ['mode', 'signed_out'] },
  { method: 'POST', path: '/portal/:id', ids: () => [fx.acct!], payer: () => payers.portalOut!, body: () => ({ email: 'fuzz@example.com', mode: 'test' }), fields: ['email', 'mode'] },
  { method: 'GET', path: '/portal/:id/sign-in', ids: () => [fx.acct!], query: () => ({ token: fx.portalToken!, return_url: 'https://merchant.example/', sig: 'x' }), params: ['token', 'return_url', 'sig'] },
  { method: 'POST', path: '/portal/:id/sign-out', ids: () => [fx.acct!], payer: () => payers.portalSignOut!, body: () => ({}), fields: ['x'] },
  portalRoute({ method: 'GET', path: '', query: () => ({ mode: 'live' }), params: ['mode'] }),
  portalRoute({ method: 'GET', path: '/payments', query: () => ({ older_than: fx.payPortal! }), params: ['older_than'] }),
  portalRoute({ method: 'GET', path: '/payments/:id', ids: () => [fx.payPortal!, fx.paid!] }),
  portalRoute({ method: 'GET', path: '/invoices', query: () => ({ older_than: fx.inPaid! }), params: ['older_than'] }),
  portalRoute({ method: 'GET', path: '/invoices/:id', ids: () => [fx.inPartial!, fx.inPaid!] }),
  portalRoute({ method: 'GET', path: '/plans/:id', ids: () => ['ip_00000000000000000000000000000'], query: () => ({ card: 'back' }), params: ['card'] }),
  portalRoute({ method: 'POST', path: '/plans/:id/card', ids: () => ['ip_00000000000000000000000000000'], body: () => ({}), fields: ['x'] }),
];

/** A signed-in portal page: its path under fx.acct's portal (read when the request is sent), the signed-in payer. */
function portalRoute(r: Route): Route {
  return {
    ...r,
    get path() {
      return `/portal/${fx.acct ?? ':account'}${r.path}`;
    },
    payer: () => payers.portalIn!,
  };
}

interface Generated {
  method: string;
  segment: string;
  query: string;
  body: string | null;
  contentType: string | null;
  auth: 'key' | 'none' | 'garbage';
  idempotencyKey: string | null;
}

/**
 * One request: mostly a valid one with a single part made hostile (the body, the query, the id
 * in the path, or a header), so that the hostile value reaches the code behind the first check;
 * sometimes everything hostile at once.
 */
function requestArb(route: Route, page: boolean): fc.Arbitrary<Generated> {
  const defaultType = page ? 'application/x-www-form-urlencoded' : 'application/json';
  const base = route.body?.() ?? {};
  const form = Object.fromEntries(Object.entries(base).map(([k, v]) => [k, String(v)]));
  const valid: Generated = {
    method: route.method,
    segment: route.ids?.()[0] ?? '',
    query: route.query ? paramsText(route.query()) : '',
    body: route.body ? (page ? paramsText(form) : JSON.stringify(base)) : null,
    contentType: defaultType,
    auth: 'key',
    idempotencyKey: null,
  };
  const body: fc.Arbitrary<string | null> = route.body
    ? page
      ? hostileParams(form, route.fields!)
      : hostileBody(base, route.fields!)
    : fc.option(hostileBody({}, ['a']), { freq: 6 });
  const query = route.query ? hostileParams(route.query(), route.params!) : fc.option(hostileParams({}, ['limit']), { freq: 6, nil: '' });
  const segment = route.ids ? idSegment(route.ids()) : fc.constant('');
  const method = fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD');
  const contentType = fc.constantFrom(null, 'text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json');
  const auth = fc.constantFrom('none' as const, 'garbage' as const);
  const idempotencyKey = fc.constantFrom('', ' ', 'k'.repeat(256), 'ÿ\u00a0', 'same-key');
  const all = fc.record({
    method: fc.oneof({ weight: 6, arbitrary: fc.constant(route.method) }, method),
    segment,
    query,
    body,
    contentType,
    auth: fc.constant('key' as const),
    idempotencyKey: fc.option(fc.uuid(), { freq: 2 }),
  });
  // Half the requests carry a fresh Idempotency-Key, so that the key's fingerprint sees every body.
  const withKey = (g: fc.Arbitrary<Generated>) => fc.tuple(g, fc.option(fc.uuid(), { freq: 2 })).map(([r, k]) => ({ ...r, idempotencyKey: r.idempotencyKey ?? k }));
  return withKey(fc.oneof(
    { weight: route.body ? 6 : 1, arbitrary: body.map((b) => ({ ...valid, body: b })) },
    { weight: route.query ? 5 : 1, arbitrary: query.map((q) => ({ ...valid, query: q })) },
    { weight: route.ids ? 2 : 0, arbitrary: segment.map((seg) => ({ ...valid, segment: seg })) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        method.map((m) => ({ ...valid, method: m })),
        contentType.map((c) => ({ ...valid, contentType: c })),
        auth.map((a) => ({ ...valid, auth: a })),
        idempotencyKey.map((k) => ({ ...valid, idempotencyKey: k })),
      ),
    },
    { weight: 2, arbitrary: all },
  ));
}

async function send(route: Route, g: Generated, page: boolean) {
  const path = route.path.replace(':id', g.segment) + (g.query ? `?${g.query}` : '');
  const headers: Record<string, string> = {};
  if (!page && g.auth === 'key') headers.authorization = `Bearer ${route.live ? liveKey : key}`;
  if (g.auth === 'garbage') headers.authorization = 'Bearer sk_test_%00\u00ff';
  if (g.idempotencyKey !== null) headers['idempotency-key'] = g.idempotencyKey;
  const payer = route.payer?.();
  let body = g.method === 'GET' || g.method === 'HEAD' ? undefined : (g.body ?? undefined);
  if (payer) {
    headers.cookie = payer.cookie;
    if (body !== undefined) body = `_csrf=${payer.token}&${body}`;
  }
  if (body !== undefined && g.contentType) headers['content-type'] = g.contentType;
  const started = Date.now();
  let res: Response;
  try {
    res = await fetch(t.url + path, { method: g.method, headers, body, redirect: 'manual', signal: AbortSignal.timeout(ANSWER_MS) });
  } catch (err) {
    throw new Error(`${g.method} ${path}: no answer within ${ANSWER_MS} ms (${(err as Error).message})`, { cause: err });
  }
  const text = await res.text();
  return { path, status: res.status, headers: res.headers, text, ms: Date.now() - started };
}

function checkAnswer(g: Generated, a: Awaited<ReturnType<typeof send>>) {
  const what = `${g.method} ${a.path.slice(0, 300)} -> ${a.status} ${a.text.slice(0, 300)}`;
  if (a.status >= 500) throw new Error(`5xx: ${what}`);
  if (!a.headers.get('request-id')?.startsWith('req_')) throw new Error(`no Request-Id: ${what}`);
  if (!a.path.startsWith('/v1') || a.status < 400 || g.method === 'HEAD') return;
  const body = JSON.parse(a.text) as { error: { type: string; code: ErrorCode; message: string; param?: string } };
  const { type, code, message, param, ...extra } = body.error;
  const shapeOk =
    Object.keys(body).length === 1 &&
    Object.keys(extra).length === 0 &&
    typeof message === 'string' &&
    (param === undefined || typeof param === 'string') &&
    ERROR_CODES[code]?.[0] === a.status &&
    ERROR_CODES[code]?.[1] === type;
  if (!shapeOk) throw new Error(`not the one error shape: ${what}`);
}

async function fuzz(route: Route, page: boolean) {
  await fc.assert(
    fc.asyncProperty(requestArb(route, page), async (g) => checkAnswer(g, await send(route, g, page))),
    // Routes that take a body have the most to check: three times the runs.
    { seed: SEED, numRuns: route.body ? RUNS * 3 : RUNS, endOnFailure: true },
  );
}

/** Every field (and query parameter) of the route in turn gets every edge value, the rest valid. */
function edgeRequests(route: Route, page: boolean): Generated[] {
  const base = route.body?.() ?? {};
  const form = Object.fromEntries(Object.entries(base).map(([k, v]) => [k, String(v)]));
  const query = route.query?.() ?? {};
  const valid: Generated = {
    method: route.method,
    segment: route.ids?.()[0] ?? '',
    query: paramsText(query),
    body: route.body ? (page ? paramsText(form) : JSON.stringify(base)) : null,
    contentType: page ? 'application/x-www-form-urlencoded' : 'application/json',
    auth: 'key',
    idempotencyKey: null,
  };
  const out: Generated[] = [];
  let draw = 0;
  const without = (o: Record<string, string>, k: string) => paramsText(Object.fromEntries(Object.entries(o).filter(([key]) => key !== k)));
  const textValues = [...NUMBER_TEXT_EDGES.map(encode), '%00', '%ED%A0%80', 'a%00b', encode('\ud800')];
  for (const k of route.params ?? []) {
    for (const v of edgesFor(textValues, ['%00', '%ED%A0%80'], draw++)) out.push({ ...valid, query: [without(query, k), `${encode(k)}=${v}`].filter(Boolean).join('&') });
  }
  for (const k of new Set([...Object.keys(base), ...(route.fields ?? [])])) {
    if (page) {
      for (const v of edgesFor(textValues, ['%00', '%ED%A0%80'], draw++)) out.push({ ...valid, body: [without(form, k), `${encode(k)}=${v}`].filter(Boolean).join('&') });
    } else {
      for (const v of edgesFor([...NUMBER_EDGES, ...TEXT_EDGES], ['\u0000', '\ud800'], draw++)) out.push({ ...valid, body: JSON.stringify({ ...base, [k]: v }) });
    }
  }
  return out;
}

describe('no 5xx from any input', () => {
  it.each([...API.map((r) => [r, false] as const), ...PAGES.map((r) => [r, true] as const)].filter(([r]) => r.body || r.params).map(([r, page]) => [`${r.method} ${r.path}`, r, page] as const))(
    'when each field of %s in turn holds edge values (NUL, lone surrogate, numbers past every bound), then no answer is a 5xx',
    async (_name, route, page) => {
      for (const g of edgeRequests(route, page)) checkAnswer(g, await send(route, g, page));
    },
  );

  it.each(API.map((r) => [`${r.method} ${r.path}`, r] as const))(
    'when hostile values reach %s, then every answer is below 500, prompt, and in the one error shape',
    async (_name, route) => fuzz(route, false),
  );

  it.each(PAGES.map((r) => [`${r.method} ${r.path}`, r] as const))(
    'when hostile values reach the hosted page %s, then every answer is below 500 and prompt',
    async (_name, route) => fuzz(route, true),
  );
});
