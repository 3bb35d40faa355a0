import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPortalToken } from '../../src/customers/portal-links.ts';
import { hashSessionToken } from '../../src/portal/store.ts';
import { fitsWidth, launchBrowser, screenshot, withWatchedPage } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { createCustomer, merchantLink, pageText, PortalClient, signedIn } from './helpers.ts';

// Issue 21, point 3: a sign-in link followed while another customer's session is open asks first
// (a POST with CSRF); the GET of that question spends nothing, and the same customer is not asked.
const t = useTestServer();

let a: Awaited<ReturnType<typeof t.account>>;
beforeAll(async () => {
  a = await t.account();
});

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
const linkRow = async (url: string) => (await t.sql`select used_at from portal_links where token_hash = ${hashPortalToken(tokenOf(url))}`)[0]!;
const sessionCustomer = async (c: PortalClient) => {
  const token = c.cookies.get('portal_session')!.split('.')[0]!;
  return (await t.sql`select customer_id from portal_sessions where token_hash = ${hashSessionToken(token)}`)[0]?.customer_id ?? null;
};

describe('a sign-in link of another customer while a session is open', () => {
  it('when the victim follows a link to the attacker\'s account, then a question page answers, the link is not spent, and the victim stays signed in as themselves', async () => {
    const victim = await createCustomer(t, a.test, { email: 'victim@example.com', first_name: 'Vera', last_name: 'Victim' });
    const attacker = await createCustomer(t, a.test, { email: 'mallory@example.com', first_name: 'Mallory', last_name: 'Mole' });
    const c = await signedIn(t, a.test, victim.id);
    const cookieBefore = c.cookies.get('portal_session');
    const link = await merchantLink(t, a.test, attacker.id);

    for (let i = 0; i < 2; i++) {
      const asked = await c.follow(link.url);
      expect(asked.status).toBe(200);
      expect(asked.setCookies.some((x) => x.startsWith('portal_session='))).toBe(false);
      const text = pageText(asked.html);
      expect(text).toContain('Sign in as someone else?');
      expect(text).toContain('You are signed in as Vera Victim (victim@example.com) . This link signs in to another account: Mallory Mole (mallory@example.com) .');
      expect(asked.html).toContain(`<form method="post" action="/portal/${a.accountId}/sign-in">`);
      expect(asked.html).toContain(`name="token" value="${tokenOf(link.url)}"`);
      expect(text).toContain('Stay signed in as victim@example.com');
      // Nothing spent, nothing replaced, however often the page is opened (a mail scanner, a reload).
      expect((await linkRow(link.url)).used_at).toBeNull();
      expect(c.cookies.get('portal_session')).toBe(cookieBefore);
      expect(await sessionCustomer(c)).toBe(victim.id);
    }
    expect(pageText((await c.get(`/portal/${a.accountId}`)).html)).toContain('Signed in as Vera Victim');
  });

  it('when the question is posted without its CSRF token, from another site, or with a token of the signed-out form, then it is refused and nothing changes', async () => {
    const first = await createCustomer(t, a.test, { email: 'first@example.com', first_name: 'First' });
    const second = await createCustomer(t, a.test, { email: 'second@example.com', first_name: 'Second' });
    const c = await signedIn(t, a.test, first.id);
    const link = await merchantLink(t, a.test, second.id);
    await c.follow(link.url);
    const token = tokenOf(link.url);
    const signedOutToken = await (async () => {
      const other = new PortalClient(t);
      other.cookies.set('csrf', c.cookies.get('csrf')!);
      await other.get(`/portal/${a.accountId}`);
      return other.token;
    })();
    const refusals = [
      await c.send('POST', `/portal/${a.accountId}/sign-in`, { token }),
      await c.send('POST', `/portal/${a.accountId}/sign-in`, { token, _csrf: signedOutToken }),
      await (async () => {
        const answer = await fetch(`${t.url}/portal/${a.accountId}/sign-in`, {
          method: 'POST',
          headers: { cookie: c.cookieHeader, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
          body: new URLSearchParams({ _csrf: c.token, token }).toString(),
          redirect: 'manual',
        });
        return { status: answer.status, html: await answer.text() };
      })(),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(403);
      expect(r.html).toContain('This form has expired');
    }
    // A stranger without any session cannot post it either (login CSRF): there is no session to confirm from.
    const stranger = new PortalClient(t);
    await stranger.get(`/portal/${a.accountId}`);
    expect((await stranger.send('POST', `/portal/${a.accountId}/sign-in`, { _csrf: stranger.token, token })).status).toBe(403);
    expect((await linkRow(link.url)).used_at).toBeNull();
    expect(await sessionCustomer(c)).toBe(first.id);
  });

  it('when the customer confirms, then the link is spent, the old session ends, the new one starts and keeps the link\'s return URL', async () => {
    const first = await createCustomer(t, a.test, { email: 'one@example.com', first_name: 'One' });
    const second = await createCustomer(t, a.test, { email: 'two@example.com', first_name: 'Two' });
    const c = await signedIn(t, a.test, first.id);
    const oldToken = c.cookies.get('portal_session')!;
    const link = await merchantLink(t, a.test, second.id, { return_url: 'https://shop.example/account' });
    const asked = await c.follow(link.url);
    expect(asked.html).toContain('name="return_url" value="https://shop.example/account"');
    const confirmed = await c.send('POST', `/portal/${a.accountId}/sign-in`, {
      _csrf: c.token,
      token: tokenOf(link.url),
      return_url: new URL(link.url).searchParams.get('return_url')!,
      sig: new URL(link.url).searchParams.get('sig')!,
    });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe(`/portal/${a.accountId}`);
    expect((await linkRow(link.url)).used_at).not.toBeNull();
    expect(await sessionCustomer(c)).toBe(second.id);
    expect(await t.sql`select 1 from portal_sessions where token_hash = ${hashSessionToken(oldToken)}`).toHaveLength(0);
    const home = await c.get(`/portal/${a.accountId}`);
    expect(pageText(home.html)).toContain('Hello, Two');
    expect(home.html).toContain('href="https://shop.example/account"');
    // A second post of the same form: the link is spent.
    expect((await c.send('POST', `/portal/${a.accountId}/sign-in`, { _csrf: c.token, token: tokenOf(link.url) })).status).toBe(410);
  });

  it('when the signed-in customer follows a new link of their own, then no question is asked', async () => {
    const cus = await createCustomer(t, a.test, { email: 'same@example.com', first_name: 'Same' });
    const c = await signedIn(t, a.test, cus.id);
    const oldToken = c.cookies.get('portal_session')!;
    const link = await merchantLink(t, a.test, cus.id);
    const res = await c.follow(link.url);
    expect(res.status).toBe(303);
    expect((await linkRow(link.url)).used_at).not.toBeNull();
    expect(c.cookies.get('portal_session')).not.toBe(oldToken);
    expect(await sessionCustomer(c)).toBe(cus.id);
  });

  it('when the open session is the same customer\'s twin in the other mode, then the question is asked (another record)', async () => {
    const test = await createCustomer(t, a.test, { email: 'twin@example.com', first_name: 'Twin' });
    const live = await createCustomer(t, a.live, { email: 'twin@example.com', first_name: 'Twin' });
    const c = await signedIn(t, a.test, test.id);
    const link = await merchantLink(t, a.live, live.id);
    const asked = await c.follow(link.url);
    expect(asked.status).toBe(200);
    expect(pageText(asked.html)).toContain('Sign in as someone else?');
    expect((await linkRow(link.url)).used_at).toBeNull();
  });
});

describe('the question in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it.each([1280, 390])('when a signed-in customer opens another customer\'s link at %i px, then the page asks, "Stay" keeps them signed in, and the keyboard confirms the switch', async (width) => {
    const victim = await createCustomer(t, a.test, { email: `stay-${width}@example.com`, first_name: 'Vera', last_name: 'Victim' });
    const other = await createCustomer(t, a.test, { email: `switch-${width}@example.com`, first_name: 'Otto', last_name: 'Other' });
    await withWatchedPage(browser, width, async (page, problems) => {
      await page.goto((await merchantLink(t, a.test, victim.id)).url);
      await page.getByText('Hello, Vera').waitFor();
      const link = await merchantLink(t, a.test, other.id);
      await page.goto(link.url);
      await page.getByRole('heading', { name: 'Sign in as someone else?' }).waitFor();
      expect(await fitsWidth(page)).toBe(true);
      await screenshot(page, `portal-switch-${width}`);
      await page.getByRole('link', { name: `Stay signed in as stay-${width}@example.com` }).click();
      await page.getByText('Hello, Vera').waitFor();
      expect((await linkRow(link.url)).used_at).toBeNull();

      await page.goto(link.url);
      const button = page.getByRole('button', { name: `Sign in as switch-${width}@example.com` });
      await button.focus();
      await page.keyboard.press('Enter');
      await page.getByText('Hello, Otto').waitFor();
      expect((await linkRow(link.url)).used_at).not.toBeNull();
      expect(problems).toEqual([]);
    });
  });
});
