import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExportJob } from '../../src/exports/run.ts';
import { useTestServer, type ApiResponse, type RequestOptions } from '../helpers/server.ts';
import { documentValidator } from './validate.ts';
import { startPlan } from '../helpers/plans.ts';
import { CARDS } from '../helpers/cards.ts';

// Every operation of the document, called on the running service through a representative flow;
// each answer (2xx and errors alike) is checked against the response schema the document gives
// for its status. A status the document does not list for the operation fails, and so does an
// operation the flow never answered with a 200.

const t = useTestServer();

type Doc = Record<string, any>;

interface Template {
  key: string;
  method: string;
  pattern: RegExp;
  operation: Doc;
}

describe('the running service against its OpenAPI document', () => {
  let doc: Doc;
  let validate: ReturnType<typeof documentValidator>;
  let templates: Template[];
  const answered = new Set<string>();
  let key: string;
  let liveKey: string;

  beforeAll(async () => {
    doc = (await t.request('GET', '/v1/openapi.json')).body;
    validate = documentValidator(doc);
    templates = Object.entries(doc.paths as Record<string, Doc>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        operation: operation as Doc,
      })),
    );
    ({ test: key, live: liveKey } = await t.account());
  });

  /** Calls the API with the test key and checks the answer against the document. */
  async function call<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const res = await t.request<T>(method, path, { key, ...opts });
    const bare = path.split('?')[0]!;
    // The most specific template first: /v1/customers/{id} before a pattern that would also match.
    const template = templates.filter((x) => x.method === method && x.pattern.test(bare)).sort((a, b) => b.key.length - a.key.length)[0];
    if (!template) throw new Error(`${method} ${bare}: not in the document`);
    const responses = template.operation.responses as Record<string, Doc>;
    const documented = responses[String(res.status)] ?? (res.status >= 500 ? responses.default : undefined);
    expect(documented, `${template.key} answered ${res.status}, which the document does not list: ${JSON.stringify(res.body)}`).toBeTruthy();
    const response = documented!.$ref ? doc.components.responses[documented!.$ref.split('/').pop()] : documented!;
    const csv = res.status === 200 && response.content['text/csv'];
    // A CSV answer (exports): its type and header line; the columns are checked in test/exports.
    if (csv) expect(res.headers.get('content-type'), template.key).toBe('text/csv; charset=utf-8');
    const problems = csv ? (typeof res.body === 'string' && /^(id|plan_id),/.test(res.body) ? [] : ['not a CSV']) : validate(response.content['application/json'].schema, res.body);
    expect(problems, `${template.key} ${res.status}: ${JSON.stringify(res.body).slice(0, 2000)}`).toEqual([]);
    expect(res.headers.get('request-id'), template.key).toMatch(/^req_/);
    if (res.status === 200) answered.add(template.key);
    return res;
  }

  const ok = async <T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> => {
    const res = await call<T>(method, path, opts);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };

  afterAll(() => {
    // Listed here too, so that a failing flow above still names what it left out.
    const missing = templates.map((x) => x.key).filter((k) => !answered.has(k));
    if (missing.length) console.warn(`operations not answered with a 200: ${missing.join(', ')}`);
  });

  it('when the account and API keys are used, then every answer matches the document', async () => {
    await ok('GET', '/v1/account');
    // The settings need a live key (issue 21): a test key's 403 is documented too.
    expect((await call('PATCH', '/v1/account', { body: { business_name: 'Tea Room' } })).status).toBe(403);
    await ok('POST', '/v1/account', { key: liveKey, body: { business_name: 'Tea Room' } });
    await ok('PATCH', '/v1/account', { key: liveKey, body: { support_email: 'hello@tearoom.example', brand_color: '#1f7a4d' } });
    const keys = await ok('GET', '/v1/api-keys');
    expect(keys.data.length).toBeGreaterThan(0);
    const created = await ok('POST', '/v1/api-keys');
    expect(created.secret).toMatch(/^sk_test_/);
    await ok('GET', `/v1/api-keys/${created.id}`);
    const rolled = await ok('POST', `/v1/api-keys/${created.id}/roll`, { body: { expires_in: 60 } });
    await ok('POST', `/v1/api-keys/${rolled.id}/revoke`);
    // Errors have their documented shape and status.
    const unauthorized = await t.request('GET', '/v1/account', { key: 'sk_test_nope' });
    expect(unauthorized.status).toBe(401);
    expect(validate({ $ref: '#/components/schemas/error' }, unauthorized.body)).toEqual([]);
    expect((await call('POST', '/v1/api-keys', { headers: { 'idempotency-key': 'k1' } })).status).toBe(400);
  });

  it('when customers, payment links and checkout sessions are used, then every answer matches the document', async () => {
    const customer = await ok('POST', '/v1/customers', {
      body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', metadata: { crm_id: '42' } },
      headers: { 'idempotency-key': 'create-ada' },
    });
    const replay = await call('POST', '/v1/customers', {
      body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', metadata: { crm_id: '42' } },
      headers: { 'idempotency-key': 'create-ada' },
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await ok('GET', `/v1/customers/${customer.id}`);
    await ok('PATCH', `/v1/customers/${customer.id}`, { body: { phone: '+44 20 7946 0000', notes: null } });
    await ok('GET', `/v1/customers?limit=1&email=ada@example.com`);
    await ok('POST', `/v1/customers/${customer.id}/portal-sessions`, { body: { return_url: 'https://merchant.example/account' } });
    expect((await call('GET', '/v1/customers/cus_01m89emrkt0006k689spej1tdy0e8')).status).toBe(404);
    expect((await call('POST', '/v1/customers', { body: { email: 'a@example.com', amount_cents: 1 } })).status).toBe(400);
    expect((await call('GET', '/v1/customers?limit=0')).status).toBe(400);
    expect((await call('POST', '/v1/customers', { rawBody: 'email=a', headers: { 'content-type': 'text/plain' } })).status).toBe(415);

    const link = await ok('POST', '/v1/payment-links', {
      body: { type: 'MULTI', amount: 12000, currency: 'eur', name: 'Yoga', slug: 'yoga-10', collect_name: true, quantity_limit: 30 },
    });
    await ok('GET', `/v1/payment-links/${link.id}`);
    await ok('PATCH', `/v1/payment-links/${link.id}`, { body: { description: 'Ten sessions' } });
    await ok('GET', '/v1/payment-links?status=ACTIVE&type=MULTI');
    await ok('GET', `/v1/payment-links/${link.id}/analytics`);

    const session = await ok('POST', '/v1/checkout/sessions', {
      body: {
        currency: 'usd',
        success_url: 'https://shop.example.com/thanks?session={CHECKOUT_SESSION_ID}',
        customer_id: customer.id,
        line_items: [{ name: 'Green tea', quantity: 2, amount: 850 }],
        metadata: { order_id: '1042' },
      },
    });
    await ok('GET', `/v1/checkout/sessions/${session.id}`);
    await ok('GET', `/v1/checkout/sessions?status=OPEN&customer_id=${customer.id}`);
    await ok('POST', `/v1/checkout/sessions/${session.id}/expire`);
    expect((await call('POST', `/v1/checkout/sessions/${session.id}/expire`)).status).toBe(400);

    const other = await ok('POST', '/v1/checkout/sessions', { body: { amount: 500, currency: 'usd', success_url: 'https://shop.example.com/' } });
    const expired = await ok('POST', `/v1/test-helpers/checkout/sessions/${other.id}/expire`);
    expect(expired.status).toBe('EXPIRED');
    await ok('DELETE', `/v1/customers/${customer.id}`);
  });

  it('when a session is paid, refunded and disputed (test helpers), then every answer matches the document', async () => {
    const session = () => ok('POST', '/v1/checkout/sessions', { body: { amount: 1999, currency: 'usd', success_url: 'https://shop.example.com/' } });
    const paid = await ok('POST', `/v1/test-helpers/checkout/sessions/${(await session()).id}/pay`, { body: { scenario: 'succeeded' } });
    expect(paid.payment.status).toBe('SUCCEEDED');
    const declined = await ok('POST', `/v1/test-helpers/checkout/sessions/${(await session()).id}/pay`, { body: { scenario: 'declined' } });
    expect(declined.payment.status).toBe('FAILED');
    await ok('GET', `/v1/payments/${paid.payment.id}`);
    await ok('GET', '/v1/payments?status=SUCCEEDED');

    const refund = await ok('POST', '/v1/refunds', { body: { payment_id: paid.payment.id, amount: 500, reason: 'requested_by_customer' } });
    await ok('GET', `/v1/refunds/${refund.id}`);
    await ok('GET', `/v1/refunds?payment_id=${paid.payment.id}`);
    await ok('POST', `/v1/refunds/${refund.id}/cancel`);

    const disputedPayment = await ok('POST', `/v1/test-helpers/checkout/sessions/${(await session()).id}/pay`, { body: { card: CARDS.visa } });
    const dispute = await ok('POST', `/v1/test-helpers/payments/${disputedPayment.payment.id}/dispute`, { body: { reason: 'product_not_received' } });
    await ok('GET', `/v1/disputes/${dispute.id}`);
    await ok('GET', `/v1/disputes?status=NEEDS_RESPONSE`);
    await ok('PATCH', `/v1/disputes/${dispute.id}`, { body: { evidence: { product_description: 'Blue mug, 350 ml' } } });
    await ok('POST', `/v1/disputes/${dispute.id}/close`);
    await ok('POST', '/v1/test-helpers/advance-time', { body: { seconds: 60 } });
    const live = await t.account();
    const forbidden = await t.request('POST', '/v1/test-helpers/advance-time', { key: live.live, body: { seconds: 60 } });
    expect(forbidden.status).toBe(403);
    expect(validate({ $ref: '#/components/schemas/error' }, forbidden.body)).toEqual([]);
  });

  it('when invoices are written, sent and settled, and their emails read, then every answer matches the document', async () => {
    const customer = await ok('POST', '/v1/customers', { body: { email: 'grace@example.com', first_name: 'Grace', company_name: 'Navy' } });
    const lines = [{ name: 'Afternoon tea for 12', quantity: 1, amount: 42000 }];
    const invoice = await ok('POST', '/v1/invoices', { body: { customer_id: customer.id, currency: 'usd', line_items: lines, allow_partial_payments: true } });
    await ok('PATCH', `/v1/invoices/${invoice.id}`, { body: { description: 'Private event' } });
    await ok('GET', `/v1/invoices/${invoice.id}`);
    await ok('POST', `/v1/invoices/${invoice.id}/finalize`);
    const sent = await ok('POST', `/v1/invoices/${invoice.id}/send`);
    expect(sent.hosted_invoice_url).toBeTruthy();
    await ok('POST', `/v1/invoices/${invoice.id}/mark-uncollectible`);
    await ok('POST', `/v1/invoices/${invoice.id}/void`);
    await ok('GET', `/v1/invoices?status=VOID&customer_id=${customer.id}`);
    // Exports (issue 27): each dataset, a range and a filter.
    for (const d of ['payments', 'refunds', 'disputes', 'customers', 'invoices', 'installment-parts']) await call('GET', `/v1/exports/${d}?created_gte=0`);
    await ok('GET', `/v1/exports/payments?status=succeeded&customer=${customer.id}&created_lt=${Math.floor(Date.now() / 1000) + 60}`);
    // Export runs: made for each dataset (PENDING: no worker here); the payments one written, then answered with its link.
    for (const d of ['payments', 'refunds', 'disputes', 'customers', 'invoices', 'installment-parts']) {
      const run = await ok('POST', `/v1/exports/${d}/runs`, { body: d === 'payments' ? { created_gte: 0, status: 'succeeded', customer: customer.id } : {} });
      if (d === 'payments') await runExportJob(t.s, run.id);
      expect((await ok('GET', `/v1/exports/${d}/runs/${run.id}`)).status).toBe(d === 'payments' ? 'SUCCEEDED' : 'PENDING');
    }
    // Search (issue 27): each resource, with results the document must describe.
    await ok('GET', `/v1/search/customers?query=${encodeURIComponent('email:"ada@example.com"')}`);
    await ok('GET', `/v1/search/payments?query=${encodeURIComponent('status:SUCCEEDED amount>=1')}&limit=2`);
    await ok('GET', `/v1/search/invoices?query=${encodeURIComponent(`customer:${customer.id}`)}`);
    await ok('GET', `/v1/search/checkout-sessions?query=${encodeURIComponent(`customer:${customer.id} OR amount>=1`)}`);
    await ok('GET', '/v1/reports/summary?interval=week');
    const draft = await ok('POST', '/v1/invoices', { body: { customer_id: customer.id, currency: 'usd' } });
    await ok('DELETE', `/v1/invoices/${draft.id}`);
    // Fraud rules and block lists (issue 27).
    const conditions = [{ attribute: 'card_country', operator: 'in', values: ['ng'] }, { attribute: 'client_ip_attempts', window_seconds: 600, operator: 'gte', value: 5 }];
    const rule = await ok('POST', '/v1/fraud/rules', { body: { name: 'Card testing', action: 'block', conditions } });
    await ok('GET', '/v1/fraud/rules');
    await ok('GET', `/v1/fraud/rules/${rule.id}`);
    await ok('PATCH', `/v1/fraud/rules/${rule.id}`, { body: { enabled: false } });
    await ok('POST', '/v1/fraud/rules/try', { body: { conditions: [{ attribute: 'amount_cents', operator: 'gte', value: 1 }] } });
    await ok('DELETE', `/v1/fraud/rules/${rule.id}`);
    const item = await ok('POST', '/v1/fraud/lists', { body: { kind: 'client_ip', value: '203.0.113.0/24', note: 'card testing' } });
    await ok('GET', '/v1/fraud/lists?kind=client_ip');
    await ok('GET', `/v1/fraud/lists/${item.id}`);
    await ok('DELETE', `/v1/fraud/lists/${item.id}`);

    const emails = await ok('GET', `/v1/emails?related_object=${invoice.id}`);
    expect(emails.data.length).toBeGreaterThan(0);
    await ok('GET', `/v1/emails/${emails.data[0].id}`);
  });

  it('when webhook endpoints, events and their deliveries are used, then every answer matches the document', async () => {
    await ok('GET', '/v1/event-types');
    const endpoint = await ok('POST', '/v1/webhook-endpoints', {
      body: { url: 'https://hooks.example.com/payments', enabled_events: ['*'], description: 'shop' },
    });
    expect(endpoint.signing_secret).toMatch(/^whsec_/);
    await ok('GET', '/v1/webhook-endpoints');
    await ok('GET', `/v1/webhook-endpoints/${endpoint.id}`);
    await ok('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled_events: ['invoice.created', 'payment.succeeded'] } });
    await ok('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    await ok('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { body: { type: 'payment.succeeded' } });

    // An event to deliver: an invoice created while the endpoint listens.
    const customer = await ok('POST', '/v1/customers', { body: { email: 'linus@example.com' } });
    await ok('POST', '/v1/invoices', { body: { customer_id: customer.id, currency: 'usd' } });
    const events = await ok('GET', '/v1/events?type=invoice.created&limit=5');
    const event = events.data[0];
    expect(event.data.object.object).toBe('invoice');
    await ok('GET', `/v1/events?created%5Bgte%5D=${event.created}`);
    await ok('GET', `/v1/events/${event.id}`);
    const deliveries = await ok('GET', `/v1/events/${event.id}/deliveries`);
    expect(deliveries.data).toHaveLength(1);
    await ok('POST', `/v1/events/${event.id}/resend`, { body: { endpoint_id: endpoint.id } });
    await ok('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries?status=PENDING`);
    await ok('POST', `/v1/webhook-endpoints/${endpoint.id}/retry-failed`, { body: { since: event.created - 60 } });
    await ok('GET', `/v1/webhook-endpoints/${endpoint.id}/stats`);
    await ok('DELETE', `/v1/webhook-endpoints/${endpoint.id}`);
    // The audit log holds the endpoint's changes (issue 25).
    await ok('GET', '/v1/audit-events?limit=5&action=webhook_endpoint.deleted');
  });

  it('when a payer starts an installment plan on a link page, then the plan reads, lists, updates and cancels as the document says', async () => {
    const link = await ok('POST', '/v1/payment-links', { body: { amount: 9000, currency: 'usd', installment_enabled: true, installment_options: [{ count: 3, interval: 'month' }] } });
    const { plan } = await startPlan(t, link.url);
    expect(plan).toBeTruthy();
    const got = await ok('GET', `/v1/installment-plans/${plan!.id}`);
    expect(got.status).toBe('ACTIVE');
    await ok('GET', `/v1/installment-plans?payment_link_id=${link.id}&status=ACTIVE&customer=${got.customer_id}`);
    await ok('GET', `/v1/payments?customer=${got.customer_id}`);
    expect((await ok('PATCH', `/v1/installment-plans/${plan!.id}`, { body: { metadata: { order: '1042' } } })).metadata).toEqual({ order: '1042' });
    const cancelled = await ok('POST', `/v1/installment-plans/${plan!.id}/cancel`);
    expect(cancelled.status).toBe('CANCELLED');
    await call('POST', `/v1/installment-plans/${plan!.id}/cancel`);
  });

  it('when the whole flow has run, then every operation of the document was answered with a 200 that matches it', async () => {
    await ok('GET', '/v1/openapi.json');
    expect(templates.map((x) => x.key).filter((k) => !answered.has(k))).toEqual([]);
  });
});
