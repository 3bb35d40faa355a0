import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { createLink } from './helpers.ts';
import { pathOf, Payer } from '../helpers/payer.ts';
import { parseExposition, sampleValue } from '../helpers/metrics.ts';

// src/payment-links/pages.ts: the form of a link as first shown is kept as bytes (SlottedPages) by
// what it shows, with each load's CSRF token filled in. Every load must still be its own page: a
// token of its own, and what the link and the account show now.
const TOKEN = 'metrics-token-0123456789abcdef';
const t = useTestServer(() => ({ env: { METRICS_TOKEN: TOKEN } }));
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const TOKEN_FIELD = /name="_csrf" value="([^"]+)"/;
const withoutToken = (html: string) => html.replace(TOKEN_FIELD, 'name="_csrf" value=""');

/** payment_link_forms_total by outcome, as Prometheus reads it from GET /metrics. */
async function formsSent(): Promise<Record<'kept' | 'new' | 'rendered', number>> {
  const res = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const samples = parseExposition(await res.text());
  const v = (outcome: string) => sampleValue(samples, 'payment_link_forms_total', { outcome }) ?? 0;
  return { kept: v('kept'), new: v('new'), rendered: v('rendered') };
}

describe('the link page kept as bytes', () => {
  it('when two payers open the page, then each gets a token of its own in the same page, and each token opens a session', async () => {
    const link = await createLink(t, key, { collect_email: true, description: 'Tea for two' });
    const a = new Payer(t);
    const b = new Payer(t);
    const pageA = await a.get(pathOf(link.url));
    const pageB = await b.get(pathOf(link.url));
    expect([pageA.status, pageB.status]).toEqual([200, 200]);
    expect(a.token).not.toBe(b.token);
    expect(a.cookie).not.toBe(b.cookie);
    expect(withoutToken(pageA.html)).toBe(withoutToken(pageB.html));
    expect(Number(pageA.headers.get('content-length'))).toBe(Buffer.byteLength(pageA.html));
    for (const p of [a, b]) {
      const posted = await p.post(pathOf(link.url), { email: 'payer@example.com' });
      expect(posted.status).toBe(303);
    }
    // A token is good only with its own cookie.
    const crossed = new Payer(t);
    crossed.cookie = a.cookie;
    crossed.token = b.token;
    expect((await crossed.post(pathOf(link.url), { email: 'payer@example.com' })).status).toBe(403);
    expect(await t.sql`select 1 from checkout_sessions where payment_link_id = ${link.id}`).toHaveLength(2);
  });

  it('when 40 payers open a new link at once, then each gets the same page with a token of its own that opens a session', async () => {
    const link = await createLink(t, key, { collect_email: true, description: 'Opening night' });
    const payers = Array.from({ length: 40 }, () => new Payer(t));
    const pages = await Promise.all(payers.map((p) => p.get(pathOf(link.url))));
    expect(pages.map((p) => p.status)).toEqual(Array(40).fill(200));
    expect(new Set(pages.map((p) => withoutToken(p.html))).size).toBe(1);
    expect(new Set(payers.map((p) => p.token)).size).toBe(40);
    const posted = await Promise.all(payers.slice(0, 10).map((p) => p.post(pathOf(link.url), { email: 'payer@example.com' })));
    expect(posted.map((p) => p.status)).toEqual(Array(10).fill(303));
    expect(await t.sql`select 1 from checkout_sessions where payment_link_id = ${link.id}`).toHaveLength(10);
  });

  it('when the link or the account changes, then the next load shows the change', async () => {
    const { test, accountId } = await t.account();
    const link = await createLink(t, test, { description: 'Before' });
    const p = new Payer(t);
    expect((await p.get(pathOf(link.url))).html).toContain('Before');
    const patched = await t.request('PATCH', `/v1/payment-links/${link.id}`, { key: test, body: { description: 'After' } });
    expect(patched.status).toBe(200);
    const after = await p.get(pathOf(link.url));
    expect(after.html).toContain('After');
    expect(after.html).not.toContain('Before');

    // The branding as the dashboard's settings page stores it (src/auth/keys.ts, setBranding).
    await t.sql`update accounts set business_name = 'Leaf & Co', brand_color = '#0a5c36' where id = ${accountId}`;
    const brandedPage = await p.get(pathOf(link.url));
    expect(brandedPage.html).toContain('Leaf &amp; Co');
    expect(brandedPage.html).toContain('#0a5c36');
    expect(brandedPage.headers.get('content-security-policy')).toContain("'sha256-");
  });

  it('when the page is opened from different sources, then each form carries its own source', async () => {
    const link = await createLink(t, key);
    const p = new Payer(t);
    const qr = await p.get(`${pathOf(link.url)}?src=QR`);
    const direct = await p.get(pathOf(link.url));
    expect(qr.html).toContain('name="src" value="QR"');
    expect(direct.html).toContain('name="src" value="DIRECT"');
  });

  it('when a page is opened three times and a form comes back with errors, then the metric counts one new, two kept and one rendered', async () => {
    const link = await createLink(t, key, { collect_email: true });
    const before = await formsSent();
    const p = new Payer(t);
    for (let i = 0; i < 3; i++) expect((await p.get(pathOf(link.url))).status).toBe(200);
    expect((await p.post(pathOf(link.url), { email: 'not an email' })).status).toBe(400);
    const after = await formsSent();
    expect({ kept: after.kept - before.kept, new: after.new - before.new, rendered: after.rendered - before.rendered }).toEqual({ kept: 2, new: 1, rendered: 1 });
  });

  it('when the page is asked with HEAD, then it has the headers and length of the page and no body', async () => {
    const link = await createLink(t, key);
    const head = await fetch(link.url, { method: 'HEAD' });
    const get = await fetch(link.url, { headers: { cookie: head.headers.get('set-cookie')!.split(';')[0]! } });
    const html = await get.text();
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(html));
    expect(await head.text()).toBe('');
  });
});
