import { expect } from 'vitest';
import { CARDS } from './cards.ts';
import type { DashClient } from './dash-client.ts';
import { createSession, disputed, sentInvoice } from './factories.ts';
import { Payer } from './payer.ts';
import type { TestServer } from './server.ts';
import { eventually } from './wait.ts';

/** A form of a dashboard page, as a browser would post it: its action and its fields' values. */
export interface PageForm {
  action: string;
  fields: Record<string, string>;
}

export interface Crawl {
  /** path → html, as the signed-in user sees it. */
  pages: Map<string, string>;
  /** action → one form posting there. */
  forms: Map<string, PageForm>;
}

export const unescapeHtml = (s: string): string => s.replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'");

/** The ids of records in a path or a page (`pay_…`, `cs_…`, `we_…`). */
export const RECORD_ID = /[a-z]{2,4}_[0-9a-z]{20,}/;

function collect(html: string, forms: Map<string, PageForm>): string[] {
  const links = [...html.matchAll(/href="(\/dashboard[^"#]*)/g)].map((m) => unescapeHtml(m[1]!));
  for (const m of html.matchAll(/<form\b[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([^]*?)<\/form>/g)) {
    const action = unescapeHtml(m[1]!);
    if (!action.startsWith('/dashboard') || forms.has(action)) continue;
    const fields: Record<string, string> = {};
    for (const [tag] of m[2]!.matchAll(/<input\b[^>]*>/g)) {
      const name = /\bname="([^"]+)"/.exec(tag)?.[1];
      if (!name) continue;
      // A checkbox posts its value only when checked; a text field its value, or nothing typed.
      if (/type="(checkbox|radio)"/.test(tag) && !/\bchecked\b/.test(tag)) continue;
      fields[name] ??= unescapeHtml(/\bvalue="([^"]*)"/.exec(tag)?.[1] ?? '');
    }
    for (const t of m[2]!.matchAll(/<textarea\b[^>]*name="([^"]+)"[^>]*>([^<]*)<\/textarea>/g)) fields[t[1]!] ??= unescapeHtml(t[2]!);
    for (const s of m[2]!.matchAll(/<select\b[^>]*name="([^"]+)"[^>]*>[^]*?<option value="([^"]*)"/g)) fields[s[1]!] ??= unescapeHtml(s[2]!);
    forms.set(action, { action, fields });
  }
  return links;
}

/**
 * Follows the links of a signed-in dashboard from Home, breadth first, up to `max` pages, as a
 * user clicking through it would; every page must answer below 500. One page per list is enough:
 * cursor links are not followed.
 */
export async function crawl(c: DashClient, max = 400): Promise<Crawl> {
  const pages = new Map<string, string>();
  const forms = new Map<string, PageForm>();
  const queue = ['/dashboard'];
  const seen = new Set(queue);
  while (queue.length && pages.size < max) {
    const path = queue.shift()!;
    const res = await c.get(path);
    expect(res.status, path).toBeLessThan(500);
    if (res.status !== 200 || !res.headers.get('content-type')?.startsWith('text/html')) continue;
    pages.set(path, res.html);
    for (const link of collect(res.html, forms)) {
      if (seen.has(link) || link.startsWith('/dashboard/assets') || /[?&](starting_after|ending_before)=/.test(link)) continue;
      seen.add(link);
      queue.push(link);
    }
  }
  return { pages, forms };
}

/**
 * Something in every section of the account's test mode, made as a merchant and payers make it: a
 * customer, a succeeded, a declined and an open session, a payment link, a sent and a draft
 * invoice, a webhook endpoint, a disputed payment (the test server needs its workers) and a refund.
 */
export async function seedEverySection(t: TestServer, key: string): Promise<void> {
  const cus = (await t.request('POST', '/v1/customers', { key, body: { email: 'ada@example.com', first_name: 'Ada' } })).body;
  const paid = await createSession(t, key, { amount: 4900, customer_id: cus.id });
  await new Payer(t).pay(paid.id);
  const declined = await createSession(t, key, { amount: 1200 });
  await new Payer(t).pay(declined.id, { card_number: CARDS.declined });
  await createSession(t, key, { amount: 700 }); // stays OPEN
  const link = (await t.request('POST', '/v1/payment-links', { key, body: { amount: 2500, currency: 'usd', name: 'Tasting', collect_email: true } })).body;
  expect(link.id).toMatch(/^pl_/);
  await sentInvoice(t, key);
  await t.request('POST', '/v1/invoices', { key, body: { customer_id: cus.id, currency: 'usd', line_items: [{ name: 'Draft line', quantity: 1, amount: 100 }] } });
  await t.request('POST', '/v1/webhook-endpoints', { key, body: { url: 'https://hooks.example.com/in', enabled_events: ['*'] } });
  await disputed(t, key, 1500);
  const payment = (await t.request('GET', '/v1/payments?status=SUCCEEDED', { key })).body.data.find((p: { disputed: boolean }) => !p.disputed);
  const refund = (await t.request('POST', '/v1/refunds', { key, body: { payment_id: payment.id, amount: 100 } })).body;
  // Settled before the seed returns: a test that compares snapshots must not see the worker's update.
  await eventually(async () => (await t.request('GET', `/v1/refunds/${refund.id}`, { key })).body.status !== 'PENDING', 60_000, 100);
}
