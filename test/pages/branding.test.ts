import { beforeAll, describe, expect, it } from 'vitest';
import { emailWorker } from '../../workers/email.ts';
import { brandCss, brandCssHash, PAGE_CSS_HASH } from '../../src/pages/layout.ts';
import { Payer, pathOf, type PageAnswer } from '../helpers/payer.ts';
import { useTestServer } from '../helpers/server.ts';
import { useSmtp } from '../helpers/smtp.ts';
import { createLink, createSession, sentInvoice } from '../helpers/factories.ts';

// The account's branding on the hosted checkout, payment link and invoice pages (and their CSP),
// and its support_email as the Reply-To of its emails, sent over real SMTP (an in-process server).

const smtp = useSmtp();
const t = useTestServer(() => ({ workers: [emailWorker], env: { SMTP_URL: smtp.url, EMAIL_FROM: 'receipts@pay.example' } }));

const BRAND = { business_name: 'Tea & Co', support_email: 'help@tea.example', brand_color: '#ffd400', logo_url: 'https://cdn.tea.example/brand/logo.png?v=3' };

let branded: { accountId: string; test: string; live: string };
let plain: { accountId: string; test: string; live: string };
beforeAll(async () => {
  branded = await t.account();
  plain = await t.account();
  const res = await t.request('PATCH', '/v1/account', { key: branded.live, body: BRAND });
  expect(res.status).toBe(200);
});

/** The directives of a Content-Security-Policy header, each a list of sources. */
function csp(page: PageAnswer): Map<string, string[]> {
  const header = page.headers.get('content-security-policy') ?? '';
  return new Map(header.split(';').filter(Boolean).map((d) => {
    const [name, ...sources] = d.trim().split(/\s+/);
    return [name!, sources];
  }));
}

/** The page shows the brand, and its CSP allows exactly the logo's origin and the two stylesheets, nothing inline. */
function expectBranded(page: PageAnswer) {
  expect(page.status).toBe(200);
  expect(page.html).toContain('<img src="https://cdn.tea.example/brand/logo.png?v=3" alt="Tea &amp; Co">');
  expect(page.html).toContain('<p class="brand-name">Tea &amp; Co</p>');
  expect(page.html).toContain(`<style>${brandCss('#ffd400')}</style>`);
  expect(page.html).toContain('.btn{background:#ffd400;color:#000000}');
  const p = csp(page);
  expect(p.get('img-src')).toEqual(["'self'", 'data:', 'https://cdn.tea.example']);
  expect(p.get('style-src')).toEqual([PAGE_CSS_HASH, brandCssHash('#ffd400')]);
  expect(p.get('default-src')).toEqual(["'none'"]);
  expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
}

/** An account with no branding: no header, no extra style, no extra origin. */
function expectPlain(page: PageAnswer) {
  expect(page.status).toBe(200);
  expect(page.html).not.toContain('class="brand');
  expect(page.html).not.toContain('cdn.tea.example');
  expect(page.html.match(/<style>/g)).toHaveLength(1);
  const p = csp(page);
  expect(p.get('img-src')).toEqual(["'self'", 'data:']);
  expect(p.get('style-src')).toEqual([PAGE_CSS_HASH]);
}

describe('branded hosted pages', () => {
  it("when a branded account's checkout is opened and paid, then the form, the completed page and the receipt show its name, logo and colour, and the CSP allows exactly them", async () => {
    const cs = await createSession(t, branded.test, { description: 'Two teapots' });
    const payer = new Payer(t);
    const form = await payer.get(`/checkout/${cs.id}`);
    expectBranded(form);
    expect(form.html).toMatch(/<button type="submit" class="btn">Pay \$19\.99<\/button>/);
    expect((await payer.pay(cs.id)).status).toBe(303);
    expectBranded(await payer.get(`/checkout/${cs.id}`));
    expectBranded(await payer.get(`/checkout/${cs.id}/receipt`));
  });

  it("when an unbranded account's checkout is opened, then it has no brand header, style or logo origin", async () => {
    const cs = await createSession(t, plain.test);
    expectPlain(await new Payer(t).get(`/checkout/${cs.id}`));
  });

  it("when a branded account's payment link is opened, then it is branded; the link's internal name appears nowhere on it", async () => {
    const link = await createLink(t, branded.test, { name: 'INTERNAL-spring-promo-7', description: 'Spring tea tasting' });
    const page = await new Payer(t).get(pathOf(link.url));
    expectBranded(page);
    expect(page.html).toContain('<h1>Spring tea tasting</h1>');
    expect(page.html).toContain('<title>Spring tea tasting: $25.00</title>');
    expect(page.html).not.toContain('INTERNAL-spring-promo-7');
    expect(page.html).not.toContain('INTERNAL');
  });

  it('when a link has no description, then its heading is the business name, else "Payment", never its name', async () => {
    const mine = await createLink(t, branded.test, { name: 'INTERNAL-no-description' });
    const page = await new Payer(t).get(pathOf(mine.url));
    expect(page.html).toContain('<h1>Tea &amp; Co</h1>');
    expect(page.html).not.toContain('INTERNAL');
    const theirs = await createLink(t, plain.test, { name: 'INTERNAL-plain' });
    const other = await new Payer(t).get(pathOf(theirs.url));
    expectPlain(other);
    expect(other.html).toContain('<h1>Payment</h1>');
    expect(other.html).not.toContain('INTERNAL');
  });

  it("when a branded account's invoice is opened, then it is branded; an unbranded one's is not", async () => {
    const inv = await sentInvoice(t, branded.test);
    const page = await new Payer(t).get(pathOf(inv.hosted_invoice_url));
    expectBranded(page);
    expect(page.html).not.toContain('<p class="merchant">Tea &amp; Co</p>');
    expectPlain(await new Payer(t).get(pathOf((await sentInvoice(t, plain.test)).hosted_invoice_url)));
  });
});

describe('support_email as Reply-To', () => {
  it("when a payer pays, then the receipt arrives from EMAIL_FROM with the business name, and replies go to the account's support_email", async () => {
    const cs = await createSession(t, branded.test, { customer_email: 'reply-test@example.com' });
    expect((await new Payer(t).pay(cs.id, { email: 'reply-test@example.com' })).status).toBe(303);
    const mail = await smtp.waitFor((m) => m.to.includes('reply-test@example.com'));
    expect(mail.parsed.from?.value).toEqual([{ name: 'Tea & Co', address: 'receipts@pay.example' }]);
    expect(mail.parsed.replyTo?.value).toEqual([{ name: '', address: 'help@tea.example' }]);
  });

  it('when the account has no support_email, then the receipt has no Reply-To', async () => {
    const cs = await createSession(t, plain.test);
    expect((await new Payer(t).pay(cs.id, { email: 'no-reply-to@example.com' })).status).toBe(303);
    const mail = await smtp.waitFor((m) => m.to.includes('no-reply-to@example.com'));
    expect(mail.parsed.replyTo).toBeUndefined();
    expect(mail.raw).not.toMatch(/^reply-to:/im);
  });
});
