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
