import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { Payer } from '../helpers/payer.ts';
import { DashClient, signedIn } from './client.ts';
import { createSession } from '../helpers/factories.ts';
import { CARDS } from '../helpers/cards.ts';

const t = useTestServer();
let a: { accountId: string; test: string; live: string };
let b: { accountId: string; test: string; live: string };

const stat = (html: string, name: string) => new RegExp(`data-stat="${name}"[^]*?</section>`).exec(html)![0];

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  // Account A, test mode: two succeeded payments (19.99 + 5.00 usd) and one failed.
  for (const [amount, card] of [
    [1999, CARDS.visa],
    [500, CARDS.visa],
    [700, CARDS.declined],
  ] as const) {
    const cs = await createSession(t, a.test, { amount });
    await new Payer(t).pay(cs.id, { card_number: card });
  }
  // Account B, test mode: one payment of 123.45 eur.
  const cs = await createSession(t, b.test, { amount: 12345, currency: 'eur' });
  await new Payer(t).pay(cs.id);
  // Account A, live mode: a payment that test mode must never show (written directly: live charges need Stripe).
  await t.sql`insert into payments (id, account_id, livemode, status, amount_cents, currency, succeeded_at)
    values ('pay_livehomefixture0000000000', ${a.accountId}, true, 'SUCCEEDED', 77700, 'usd', now())`;
});

describe('the Home page', () => {
  it('shows today’s and 30 days’ volume and the counts of the session’s account in test mode', async () => {
    const c = await signedIn(t, a.accountId, 'home-a@example.com');
    const home = await c.get('/dashboard');
    expect(home.status).toBe(200);
    expect(stat(home.html, 'today')).toContain('$24.99');
    expect(stat(home.html, 'last30')).toContain('$24.99');
    expect(stat(home.html, 'succeeded')).toContain('<p class="stat">2</p>');
    expect(stat(home.html, 'failed')).toContain('<p class="stat">1</p>');
    expect(home.html).not.toContain('€123.45');
    expect(home.html).not.toContain('$777.00');
    expect(home.html).toContain('TEST MODE');
    const today = new Date().toISOString().slice(0, 10);
    expect(home.html).toContain(`data-day="${today}" data-amount="2499"`);
    expect(home.html.match(/<rect /g)).toHaveLength(30);
  });

  it('switching to live shows only live data and no test banner; switching back restores test', async () => {
    const c = await signedIn(t, a.accountId, 'home-live@example.com');
    const sw = await c.post('/dashboard/mode', { mode: 'live', back: '/dashboard' });
    expect(sw.status).toBe(303);
    expect(sw.location).toBe('/dashboard');
    const live = await c.get('/dashboard');
    expect(live.html).not.toContain('TEST MODE');
    expect(live.html).toContain('data-mode="live"');
    expect(stat(live.html, 'last30')).toContain('$777.00');
    expect(stat(live.html, 'succeeded')).toContain('<p class="stat">1</p>');
    expect(live.html).not.toContain('$24.99');
    // The mode is the session's: another session of the same account still sees test data.
    const other = await signedIn(t, a.accountId, 'home-other@example.com');
    expect((await other.get('/dashboard')).html).toContain('TEST MODE');
    await c.post('/dashboard/mode', { mode: 'test', back: 'https://evil.example/' });
    const back = await c.get('/dashboard');
    expect(back.html).toContain('TEST MODE');
    expect(stat(back.html, 'last30')).toContain('$24.99');
  });

  it('another account’s user sees only its own data and its own users', async () => {
    const c = await signedIn(t, b.accountId, 'home-b@example.com');
    const home = await c.get('/dashboard');
    expect(stat(home.html, 'last30')).toContain('€123.45');
    expect(home.html).not.toContain('$24.99');
    expect(stat(home.html, 'failed')).toContain('<p class="stat">0</p>');
    const users = await c.get('/dashboard/team');
    expect(users.html).toContain('home-b@example.com');
    expect(users.html).not.toContain('home-a@example.com');
  });

  it('sends a refused mode outside the dashboard back home, never elsewhere', async () => {
    const c = await signedIn(t, b.accountId, 'home-redirect@example.com');
    const res = await c.post('/dashboard/mode', { mode: 'live', back: 'https://evil.example/' });
    expect(res.location).toBe('/dashboard');
    expect((await c.post('/dashboard/mode', { mode: 'sideways' })).status).toBe(400);
  });

  it('sends strict security headers: scripts of our own only, the stylesheet by hash, no framing, no caching', async () => {
    const res = await new DashClient(t).get('/dashboard/sign-in');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'sha256-[^']+'(;|$)/);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.html).not.toContain('<script'); // the sign-in page has no script at all

    // A signed-in page loads the one script, from the service itself, versioned and nosniff.
    const c = await signedIn(t, a.accountId, 'home-csp@example.com');
    const home = await c.get('/dashboard');
    const src = /<script src="([^"]+)" defer><\/script>/.exec(home.html)![1]!;
    expect(src).toMatch(/^\/dashboard\/assets\/dashboard\.js\?v=[0-9a-f]{16}$/);
    expect(home.html.match(/<script/g)).toHaveLength(1);
    const js = await fetch(t.url + src);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
