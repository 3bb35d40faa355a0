import { Payer } from '../checkout/helpers.ts';
import type { TestServer } from '../helpers/server.ts';

export { Payer };

export async function createLink(t: TestServer, key: string, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/v1/payment-links', { key, body: { amount: 2500, currency: 'usd', name: 'Concert ticket', ...body } });
  if (res.status !== 200) throw new Error(`create link: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The path of a URL the service handed out (link url, checkout url, redirect). */
export const pathOf = (url: string) => {
  const u = new URL(url, 'http://x');
  return u.pathname + u.search;
};

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

/** The types of the events about `objectId`, oldest first (the data column holds JSON text). */
export async function eventTypes(t: TestServer, objectId: string): Promise<string[]> {
  const rows = await t.sql<{ type: string; data: unknown }[]>`
    select type, data from events where position(${objectId} in data::text) > 0 order by id`;
  return rows
    .filter((r) => {
      const d = (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as { object?: { id?: string } };
      return d.object?.id === objectId;
    })
    .map((r) => r.type);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` answers truthy (work done by workers), or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(50);
  }
}
