import { beforeAll, describe, expect, it } from 'vitest';
import { createPaymentsClient, PaymentsApiError, type Customer, type PaymentsClient, type WebhookEndpointWithSecret } from '../../client/src/index.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

/** A fetch that records what the client sent, and may fail an attempt on purpose. */
function recordingFetch(fail?: (request: Request, attempt: number) => 'drop-after' | 'drop-before' | '503-after' | undefined) {
  const sent: Array<{ method: string; path: string; key: string | null }> = [];
  const fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    sent.push({ method: request.method, path: url.pathname + url.search, key: request.headers.get('idempotency-key') });
    const how = fail?.(request, sent.length);
    if (how === 'drop-before') throw new TypeError('fetch failed');
    const res = await globalThis.fetch(request);
    if (how === 'drop-after') {
      await res.arrayBuffer(); // the service answered and committed; the answer is lost on the way back
      throw new TypeError('fetch failed');
    }
    if (how === '503-after') return new Response('<html>Bad gateway</html>', { status: 503, headers: { 'content-type': 'text/html' } });
    return res;
  };
  return { sent, fetch };
}

describe('the typed client (client/) against the running service', () => {
  let key: string;
  let api: PaymentsClient;
  const client = (fetch?: (r: Request) => Promise<Response>) => createPaymentsClient({ apiKey: key, baseUrl: t.url, retryDelayMs: 10, fetch });

  beforeAll(async () => {
    key = (await t.account()).test;
    api = client();
  });

  it('when 25 customers are created and listed 10 a page, then autoPaginate yields all 25, newest first, over 3 pages', async () => {
    const made: Customer[] = [];
    for (let i = 0; i < 25; i++) made.push(await api.post('/v1/customers', { body: { email: `c${i}@example.com`, first_name: `C${i}` } }));
    const { sent, fetch } = recordingFetch();
    const seen: string[] = [];
    for await (const c of client(fetch).autoPaginate('/v1/customers', { params: { query: { limit: 10 } } })) seen.push(c.id);
    expect(seen).toEqual(made.map((c) => c.id).reverse());
    expect(sent.map((s) => s.path)).toEqual([
      '/v1/customers?limit=10',
      `/v1/customers?limit=10&starting_after=${made[15]!.id}`,
      `/v1/customers?limit=10&starting_after=${made[5]!.id}`,
    ]);
    // Filters go with every page.
    const ada = [];
    for await (const c of api.autoPaginate('/v1/customers', { params: { query: { email: 'c3@example.com' } } })) ada.push(c);
    expect(ada.map((c) => c.id)).toEqual([made[3]!.id]);
  });

  it('when a POST is sent, then it carries a random Idempotency-Key, a new one per call; the API key calls, which refuse one, carry none', async () => {
    const { sent, fetch } = recordingFetch();
    const c = client(fetch);
    await c.post('/v1/customers', { body: { email: 'k1@example.com' } });
    await c.post('/v1/customers', { body: { email: 'k2@example.com' } });
    const newKey = await c.post('/v1/api-keys');
    expect(newKey.secret).toMatch(/^sk_test_/);
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]!.key).not.toBe(sent[0]!.key);
    expect(sent[2]).toMatchObject({ method: 'POST', path: '/v1/api-keys', key: null });
  });

  it('when the connection drops after the service created the customer, then the retry with the same key gets that customer: one record', async () => {
    const { sent, fetch } = recordingFetch((request, n) => (request.method === 'POST' && n === 1 ? 'drop-after' : undefined));
    const customer = await client(fetch).post('/v1/customers', { body: { email: 'dropped@example.com' } });
    expect(sent).toHaveLength(2);
    expect(sent[1]!.key).toBe(sent[0]!.key);
    const rows = await t.sql`select id from customers where email = 'dropped@example.com'`;
    expect(rows.map((r) => r.id)).toEqual([customer.id]);
  });

  it('when the answer is a 503 from a proxy after the service acted, then the retry replays the first answer: one record', async () => {
    const { sent, fetch } = recordingFetch((request, n) => (request.method === 'POST' && n === 1 ? '503-after' : undefined));
    const link = await client(fetch).post('/v1/payment-links', { body: { amount: 1500, currency: 'usd', name: 'Retried' } });
    expect(sent).toHaveLength(2);
    expect(sent[1]!.key).toBe(sent[0]!.key);
    const rows = await t.sql`select id from payment_links where name = 'Retried'`;
    expect(rows.map((r) => r.id)).toEqual([link.id]);
  });

  it('when the same Idempotency-Key is given twice, then the second call answers the first record: one record', async () => {
    const body = { email: 'twice@example.com', first_name: 'Twice' };
    const first = await api.post('/v1/customers', { body, params: { header: { 'Idempotency-Key': 'create-twice' } } });
    const second = await api.post('/v1/customers', { body, params: { header: { 'Idempotency-Key': 'create-twice' } } });
    expect(second).toEqual(first);
    expect(await t.sql`select id from customers where email = 'twice@example.com'`).toHaveLength(1);
  });

  it('when a request that carries no key fails on the network, then it is not sent again (no second API key)', async () => {
    const { sent, fetch } = recordingFetch(() => 'drop-before');
    await expect(client(fetch).post('/v1/api-keys')).rejects.toBeInstanceOf(TypeError);
    expect(sent).toHaveLength(1);
  });

  it('when the API refuses a call, then a typed PaymentsApiError carries its type, code, param, message, status and Request-Id', async () => {
    const missing = await api.get('/v1/customers/{id}', { params: { path: { id: 'cus_01m89emrkt0006k689spej1tdy0e8' } } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(PaymentsApiError);
    const e = missing as PaymentsApiError;
    expect({ status: e.status, type: e.type, code: e.code, param: e.param }).toEqual({
      status: 404,
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'id',
    });
    expect(e.message).toContain('No such customer');
    expect(e.requestId).toMatch(/^req_/);

    const unknown = (await api.post('/v1/checkout/sessions', { body: { currency: 'usd', success_url: 'https://x.example/', amount_cents: 5 } as never }).catch((x: unknown) => x)) as PaymentsApiError;
    expect({ status: unknown.status, code: unknown.code, param: unknown.param }).toEqual({ status: 400, code: 'parameter_unknown', param: 'amount_cents' });

    const bad = createPaymentsClient({ apiKey: 'sk_test_nope', baseUrl: t.url });
    const unauthorized = (await bad.get('/v1/account').catch((x: unknown) => x)) as PaymentsApiError;
    expect({ status: unauthorized.status, type: unauthorized.type }).toEqual({ status: 401, type: 'authentication_error' });

    const { fetch } = recordingFetch(() => '503-after');
    const proxied = (await client(fetch).get('/v1/account').catch((x: unknown) => x)) as PaymentsApiError;
    expect({ status: proxied.status, type: proxied.type, code: proxied.code }).toEqual({ status: 503, type: 'api_error', code: 'invalid_response' });
  });

  it('when a webhook endpoint is created, then the answer carries its signing secret (typed), shown that once', async () => {
    const endpoint: WebhookEndpointWithSecret = await api.post('/v1/webhook-endpoints', {
      body: { url: 'https://hooks.example.com/payments', enabled_events: ['payment.succeeded', 'checkout.session.completed'] },
    });
    expect(endpoint.signing_secret).toMatch(/^whsec_/);
    expect(endpoint.enabled_events).toEqual(['payment.succeeded', 'checkout.session.completed']);
    const read = await api.get('/v1/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } } });
    expect(read).not.toHaveProperty('signing_secret');
    const deleted = await api.delete('/v1/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } } });
    expect(deleted).toEqual({ id: endpoint.id, object: 'webhook_endpoint', deleted: true });
  });
});
