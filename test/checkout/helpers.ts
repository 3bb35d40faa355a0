import type { TestServer } from '../helpers/server.ts';

export const SUCCESS_URL = 'https://merchant.example/thanks?session={CHECKOUT_SESSION_ID}';

export async function createSession(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/v1/checkout/sessions', {
    key,
    body: { amount: 1999, currency: 'usd', success_url: SUCCESS_URL, ...body },
  });
  if (res.status !== 200) throw new Error(`create session: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
