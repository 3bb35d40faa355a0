import { Payer, pathOf } from '../helpers/payer.ts';
import type { TestServer } from '../helpers/server.ts';

export async function createLink(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/v1/payment-links', { key, body: { amount: 2500, currency: 'usd', name: 'Concert ticket', ...body } });
  if (res.status !== 200) throw new Error(`create link: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * One payer, start to end: opens the link page, submits its form, lands on the hosted checkout
 * and pays there with `card`. Answers the session id and the checkout's answer to the payment.
 */
export async function payThroughLink(
  t: TestServer,
  linkUrl: string,
  form: Record<string, string> = {},
  card: Record<string, string> = {},
) {
  const payer = new Payer(t);
  const page = await payer.get(pathOf(linkUrl));
  if (page.status !== 200) throw new Error(`link page: ${page.status}`);
  // What a browser posts: the hidden src field of the page, and the payer's fields.
  const src = /name="src" value="([A-Z]+)"/.exec(page.html)![1]!;
  const fields = { src, email: 'payer@example.com', name: 'Ada Lovelace', phone: '+1 415 555 0100', ...form };
  const started = await payer.post(pathOf(linkUrl).split('?')[0]!, fields);
  if (started.status !== 303 || !started.location) throw new Error(`link form: ${started.status} ${started.html.slice(0, 300)}`);
  const sessionId = /\/(cs_[0-9a-z]+)/.exec(started.location)![1]!;
  await payer.get(pathOf(started.location));
  const paid = await payer.pay(sessionId, card);
  return { payer, sessionId, paid };
}
