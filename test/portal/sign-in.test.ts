import { beforeAll, describe, expect, it } from 'vitest';
import { hashPortalToken } from '../../src/customers/portal-links.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually, settled } from '../helpers/wait.ts';
import { createCustomer, merchantLink, pageText, PortalClient } from './helpers.ts';

// The magic link: asked for on the portal's page (one answer for known and unknown emails) or made
// by the merchant through the API; single use, short-lived, bound to its account; the session it
// starts. Limits are off here (test/portal/throttle.test.ts tests them).
const t = useTestServer({ env: { PORTAL_SIGN_IN_PER_CLIENT_PER_HOUR: '0', PORTAL_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });

let a: Awaited<ReturnType<typeof t.account>>;
let b: Awaited<ReturnType<typeof t.account>>;
beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  await t.sql`update accounts set business_name = 'Harbour Tea Rooms' where id = ${a.accountId}`;
});

const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;

describe('the sign-in link', () => {
  it('when a link is followed, then a session starts (HttpOnly, SameSite=Lax cookie scoped to this portal) and the overview shows; a second click says the link no longer works', async () => {
    const cus = await createCustomer(t, a.test, { email: 'once@example.com', first_name: 'Grace' });
    const link = await merchantLink(t, a.test, cus.id);
    // A HEAD (a mail client's link check) leaves the link unspent.
    expect((await fetch(link.url, { method: 'HEAD', redirect: 'manual' })).status).toBe(200);
    const c = new PortalClient(t);
    const first = await c.follow(link.url);
    expect(first.status).toBe(303);
    expect(first.location).toBe(`/portal/${a.accountId}`);
    const cookie = first.setCookies.find((x) => x.startsWith('portal_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toContain(`Path=/portal/${a.accountId}`);
    expect(cookie).not.toMatch(/Secure/i); // plain http here; Secure over https
    expect(first.headers.get('cache-control')).toBe('no-store');
    const home = await c.get(`/portal/${a.accountId}`);
    expect(home.status).toBe(200);
    expect(home.html).toContain('Hello, Grace');
    expect(home.html).toContain('Harbour Tea Rooms');
    // Only the hash of the session's token is stored.
    const token = c.cookies.get('portal_session')!;
    const [row] = await t.sql`select customer_id, livemode from portal_sessions where token_hash = ${hashPortalToken(token)}`;
    expect(row).toEqual({ customer_id: cus.id, livemode: false });
    expect(JSON.stringify(await t.sql`select * from portal_sessions`)).not.toContain(token);

    const again = await new PortalClient(t).follow(link.url);
    expect(again.status).toBe(410);
    expect(again.html).toContain('This link no longer works');
    expect(again.html).toMatch(/<label for="email">Email<\/label>/);
    expect(again.setCookies.some((x) => x.startsWith('portal_session='))).toBe(false);
  });

  it('when the link is older than its 15 minutes, then it no longer works', async () => {
    const cus = await createCustomer(t, a.test, { email: 'late@example.com' });
    const link = await merchantLink(t, a.test, cus.id);
    expect(link.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(895);
    expect(link.expires_at - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(900);
    await t.sql`update portal_links set expires_at = now() - interval '1 second', created_at = now() - interval '16 minutes' where token_hash = ${hashPortalToken(tokenOf(link.url))}`;
    const res = await new PortalClient(t).follow(link.url);
    expect(res.status).toBe(410);
    expect(res.html).toContain('This link no longer works');
  });

  it('when a link of one account is used under another account\'s portal, then it does not work there, and is not spent', async () => {
    const cus = await createCustomer(t, a.test, { email: 'foreign@example.com' });
    const link = await merchantLink(t, a.test, cus.id);
    const c = new PortalClient(t);
    const res = await c.get(`/portal/${b.accountId}/sign-in?token=${tokenOf(link.url)}`);
    expect(res.status).toBe(410);
    expect(res.html).toContain('This link no longer works');
    expect((await c.follow(link.url)).status).toBe(303);
  });

  it('when the token is malformed, missing or made up, then the same page answers', async () => {
    for (const q of ['', '?token=', '?token=abc', `?token=${'A'.repeat(43)}`, '?token=%00']) {
      const res = await new PortalClient(t).get(`/portal/${a.accountId}/sign-in${q}`);
      expect([400, 410], q).toContain(res.status);
      if (res.status === 410) expect(res.html).toContain('This link no longer works');
    }
  });

  it('when two clicks on one link race, then exactly one starts a session', async () => {
    const cus = await createCustomer(t, a.test, { email: 'race@example.com' });
    const link = await merchantLink(t, a.test, cus.id);
    const answers = await Promise.all(Array.from({ length: 8 }, () => new PortalClient(t).follow(link.url)));
    expect(answers.map((r) => r.status).sort()).toEqual([303, 410, 410, 410, 410, 410, 410, 410]);
    expect((await t.sql`select count(*)::int as n from portal_sessions where customer_id = ${cus.id}`)[0]!.n).toBe(1);
  });

  it('when a test-mode link is followed, then the session is of test mode and says so on every page', async () => {
    const cus = await createCustomer(t, a.test, { email: 'mode@example.com' });
    const c = new PortalClient(t);
    await c.follow((await merchantLink(t, a.test, cus.id)).url);
    const home = await c.get(`/portal/${a.accountId}`);
    expect(home.html).toContain('Test mode');
    const live = await createCustomer(t, a.live, { email: 'mode@example.com' });
    const l = new PortalClient(t);
    await l.follow((await merchantLink(t, a.live, live.id)).url);
    expect((await l.get(`/portal/${a.accountId}`)).html).not.toContain('Test mode');
  });
});

describe('asking for a link on the portal page', () => {
  it('when an email is known and when it is not, then the answer has the same status and the same words, and only the known one gets an email', async () => {
    const cus = await createCustomer(t, a.test, { email: 'known@example.com' });
    const live = await createCustomer(t, a.live, { email: 'known@example.com' });
    const answers = [];
    for (const email of ['known@example.com', 'nobody@example.com']) {
      const c = new PortalClient(t);
      const page = await c.get(`/portal/${a.accountId}?mode=test`);
      expect(page.status).toBe(200);
      expect(page.html).toContain('Sign in to your account');
      expect(page.html).toContain('<input type="hidden" name="mode" value="test">');
      const res = await c.post(`/portal/${a.accountId}`, { email, mode: 'test' });
      answers.push({ status: res.status, text: pageText(res.html).replaceAll(email, '<email>'), cookies: res.setCookies.filter((x) => !x.startsWith('hp_csrf=')) });
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(200);
    expect(answers[0]!.text).toContain('If <email> is known to Harbour Tea Rooms, a sign-in link is on its way to it.');

    // The work runs after the answer: the known email gets one email with a link; the unknown none.
    const [email] = await eventually(async () => {
      const rows = await t.sql`select * from emails where template = 'portal_link' and account_id = ${a.accountId}`;
      return rows.length ? rows : null;
    });
    await settled(t); // both requests' work is done: the unknown email's made nothing
    const rows = await t.sql`select * from emails where template = 'portal_link' and account_id = ${a.accountId}`;
    expect(rows).toHaveLength(1);
    expect(email).toMatchObject({ to_address: 'known@example.com', livemode: false, related_object: cus.id });
    // A test-mode request signs in the test-mode record only.
    const links = await t.sql`select customer_id, livemode from portal_links where customer_id in ${t.sql([cus.id, live.id])}`;
    expect(links).toEqual([{ customer_id: cus.id, livemode: false }]);
    const url = /http:\/\/[^\s]+token=[A-Za-z0-9_-]{43}/.exec(email!.text_body as string)![0];
    const c = new PortalClient(t);
    expect((await c.follow(url)).status).toBe(303);
    expect((await c.get(`/portal/${a.accountId}`)).html).toContain('Test mode');
  });

  it('when known and unknown emails are asked for in turn, then the answers take about the same time (the work is done after the answer)', async () => {
    await createCustomer(t, a.test, { email: 'timing@example.com' });
    const times: Record<string, number[]> = { known: [], unknown: [] };
    const c = new PortalClient(t);
    await c.get(`/portal/${a.accountId}?mode=test`);
    for (let i = 0; i < 12; i++) {
      for (const [kind, email] of [['known', 'timing@example.com'], ['unknown', `nobody${i}@example.com`]] as const) {
        const started = performance.now();
        expect((await c.post(`/portal/${a.accountId}`, { email, mode: 'test' })).status).toBe(200);
        times[kind]!.push(performance.now() - started);
      }
    }
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    // Within 15 ms, or within a third of the answer's own time on a loaded machine (54 ms apart was
    // seen with both medians inflated); work done before the answer would show as a steady gap.
    const [known, unknown] = [median(times.known!), median(times.unknown!)];
    expect(Math.abs(known - unknown)).toBeLessThan(Math.max(15, Math.max(known, unknown) / 3));
  });

  it('when the form is posted without its CSRF token, or from another site, then it is refused and nothing is sent', async () => {
    await createCustomer(t, a.test, { email: 'csrf@example.com' });
    const c = new PortalClient(t);
    await c.get(`/portal/${a.accountId}`);
    const missing = await c.send('POST', `/portal/${a.accountId}`, { email: 'csrf@example.com', mode: 'test' });
    expect(missing.status).toBe(403);
    expect(missing.html).toContain('This form has expired');
    const crossSite = new PortalClient(t, { 'sec-fetch-site': 'cross-site' });
    await crossSite.get(`/portal/${a.accountId}`);
    expect((await crossSite.post(`/portal/${a.accountId}`, { email: 'csrf@example.com', mode: 'test' })).status).toBe(403);
    // Another account's token does not pass either.
    const other = new PortalClient(t);
    await other.get(`/portal/${b.accountId}`);
    other.cookies.set('hp_csrf', c.cookies.get('hp_csrf')!);
    expect((await other.send('POST', `/portal/${a.accountId}`, { _csrf: other.token, email: 'csrf@example.com', mode: 'test' })).status).toBe(403);
    await settled(t); // a refused post starts no work; had one started, it is done now
    expect(await t.sql`select 1 from emails where to_address = 'csrf@example.com'`).toHaveLength(0);
  });

  it('when the email is not an email, then the form says so beside the field (400), whatever is known', async () => {
    const c = new PortalClient(t);
    await c.get(`/portal/${a.accountId}`);
    const res = await c.post(`/portal/${a.accountId}`, { email: 'not an email' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('aria-invalid="true"');
    expect(res.html).toContain('Enter an email address, such as name@example.com.');
  });

  it('when one email is several customer records, then one email carries a link per record (newest first), each signing in its own record', async () => {
    const older = await createCustomer(t, a.test, { email: 'Twice@Example.com', first_name: 'Ada', last_name: 'Byron', company_name: 'Old Co' });
    const newer = await createCustomer(t, a.test, { email: 'twice@example.com', first_name: 'Ada', last_name: 'Lovelace' });
    const c = new PortalClient(t);
    expect((await c.askForLink(a.accountId, 'TWICE@example.com', 'test')).status).toBe(200);
    const [email] = await eventually(async () => {
      const rows = await t.sql`select * from emails where template = 'portal_link' and lower(to_address) = 'twice@example.com'`;
      return rows.length ? rows : null;
    });
    const text = email!.text_body as string;
    expect(text).toContain('Your email belongs to 2 customer records');
    const urls = [...text.matchAll(/Sign in as ([^:]+): (http:\/\/\S+)/g)].map((m) => ({ label: m[1]!, url: m[2]! }));
    expect(urls.map((u) => u.label)).toEqual([expect.stringContaining('Ada Lovelace'), expect.stringContaining('Ada Byron, Old Co')]);
    for (const [i, id] of [newer.id, older.id].entries()) {
      const s = new PortalClient(t);
      expect((await s.follow(urls[i]!.url)).status).toBe(303);
      const [row] = await t.sql`select customer_id from portal_sessions where token_hash = ${hashPortalToken(s.cookies.get('portal_session')!)}`;
      expect(row!.customer_id).toBe(id);
    }
  });
});

describe('the session', () => {
  it('when the customer signs out, then the session ends, the cookie is cleared, and the old cookie no longer opens anything', async () => {
    const cus = await createCustomer(t, a.test, { email: 'out@example.com' });
    const c = new PortalClient(t);
    await c.follow((await merchantLink(t, a.test, cus.id)).url);
    const cookie = c.cookies.get('portal_session')!;
    await c.get(`/portal/${a.accountId}`);
    // Without the token, sign-out is refused and the session lives on.
    expect((await c.send('POST', `/portal/${a.accountId}/sign-out`, {})).status).toBe(403);
    expect((await c.get(`/portal/${a.accountId}/payments`)).status).toBe(200);
    const out = await c.post(`/portal/${a.accountId}/sign-out`);
    expect(out.status).toBe(303);
    expect(out.location).toBe(`/portal/${a.accountId}?signed_out=1&mode=test`);
    expect(out.setCookies.some((x) => x.startsWith('portal_session=;') && /Max-Age=0/i.test(x))).toBe(true);
    expect((await c.get(out.location!)).html).toContain('You are signed out.');
    const stale = new PortalClient(t);
    stale.cookies.set('portal_session', cookie);
    const res = await stale.get(`/portal/${a.accountId}/payments`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/portal/${a.accountId}`);
  });

  it('when a session is idle past its limit, or older than its absolute limit, then it is refused (and deleted)', async () => {
    const cfg = t.s.config.portal;
    for (const column of ['last_seen_at', 'created_at'] as const) {
      const cus = await createCustomer(t, a.test, { email: `${column}@example.com` });
      const c = new PortalClient(t);
      await c.follow((await merchantLink(t, a.test, cus.id)).url);
      expect((await c.get(`/portal/${a.accountId}/payments`)).status).toBe(200);
      const secs = (column === 'last_seen_at' ? cfg.sessionIdleSeconds : cfg.sessionMaxSeconds) + 5;
      await t.sql`update portal_sessions set ${t.sql(column)} = now() - make_interval(secs => ${secs}) where customer_id = ${cus.id}`;
      const res = await c.get(`/portal/${a.accountId}/payments`);
      expect(res.status, column).toBe(303);
      expect(await t.sql`select 1 from portal_sessions where customer_id = ${cus.id}`).toHaveLength(0);
    }
    expect(cfg.sessionIdleSeconds).toBe(30 * 60);
    expect(cfg.sessionMaxSeconds).toBe(8 * 3600);
  });

  it('when a session cookie of one account is sent under another account\'s portal, then it signs nothing in there', async () => {
    const cus = await createCustomer(t, a.test, { email: 'cookie@example.com' });
    const c = new PortalClient(t);
    await c.follow((await merchantLink(t, a.test, cus.id)).url);
    // A browser sends it only under /portal/<a>; a client that sends it anyway is not signed in at <b>.
    const elsewhere = () => {
      const x = new PortalClient(t);
      x.cookies.set('portal_session', c.cookies.get('portal_session')!);
      return x;
    };
    const res = await elsewhere().get(`/portal/${b.accountId}`);
    expect(res.status).toBe(200);
    expect(res.html).toContain('Sign in to your account');
    expect(res.setCookies.some((x) => x.startsWith('portal_session=;') && x.includes(`Path=/portal/${b.accountId}`))).toBe(true);
    expect((await elsewhere().get(`/portal/${b.accountId}/payments`)).status).toBe(303);
    expect((await c.get(`/portal/${a.accountId}/payments`)).status).toBe(200); // still signed in at its own
  });

  it('when the merchant gave a return_url, then the portal shows "Back to <merchant>"; a changed return_url in the link is ignored', async () => {
    const cus = await createCustomer(t, a.test, { email: 'back@example.com' });
    const link = await merchantLink(t, a.test, cus.id, { return_url: 'https://tea.example/account?x=1' });
    expect(link.return_url).toBe('https://tea.example/account?x=1');
    const c = new PortalClient(t);
    await c.follow(link.url);
    const home = await c.get(`/portal/${a.accountId}`);
    expect(home.html).toContain('<a class="back" href="https://tea.example/account?x=1">Back to Harbour Tea Rooms</a>');
    expect((await c.get(`/portal/${a.accountId}/payments`)).html).toContain('Back to Harbour Tea Rooms');

    const forged = await merchantLink(t, a.test, cus.id, { return_url: 'https://tea.example/account' });
    const f = new PortalClient(t);
    expect((await f.follow(forged.url.replace(encodeURIComponent('https://tea.example/account'), encodeURIComponent('https://evil.example/')))).status).toBe(303);
    const page = await f.get(`/portal/${a.accountId}`);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('evil.example');
    expect(page.html).not.toContain('Back to');
  });

  it('when the account does not exist, then the portal answers 404', async () => {
    for (const path of ['/portal/acct_00000000000000000000000000000', '/portal/nope', '/portal', '/portal/']) {
      const res = await new PortalClient(t).get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });
});

describe('POST /v1/customers/:id/portal-sessions', () => {
  it('when called with a test key, then it answers a test-mode portal_session with a one-time link; with a live key, a live one', async () => {
    const cus = await createCustomer(t, a.test, { email: 'api@example.com' });
    const res = await t.request('POST', `/v1/customers/${cus.id}/portal-sessions`, { key: a.test, body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'portal_session',
      livemode: false,
      customer_id: cus.id,
      url: expect.stringMatching(new RegExp(`^${t.url}/portal/${a.accountId}/sign-in\\?token=[A-Za-z0-9_-]{43}$`)),
      expires_at: expect.any(Number),
      return_url: null,
      created: expect.any(Number),
    });
    expect(res.body.expires_at - res.body.created).toBe(900);
    const live = await createCustomer(t, a.live, { email: 'api@example.com' });
    const liveRes = await t.request('POST', `/v1/customers/${live.id}/portal-sessions`, { key: a.live });
    expect(liveRes.status).toBe(200);
    expect(liveRes.body.livemode).toBe(true);
    const [row] = await t.sql`select livemode, customer_id from portal_links where token_hash = ${hashPortalToken(tokenOf(liveRes.body.url))}`;
    expect(row).toEqual({ livemode: true, customer_id: live.id });
  });

  it("when the customer is another account's, of the other mode, deleted or made up, then 404 resource_missing, and no link is made", async () => {
    const mine = await createCustomer(t, a.test, { email: 'iso@example.com' });
    const theirs = await createCustomer(t, b.test, { email: 'iso@example.com' });
    const gone = await createCustomer(t, a.test, { email: 'gone@example.com' });
    await t.request('DELETE', `/v1/customers/${gone.id}`, { key: a.test });
    const before = (await t.sql`select count(*)::int as n from portal_links`)[0]!.n;
    for (const [key, id] of [[a.test, theirs.id], [a.live, mine.id], [a.test, gone.id], [a.test, 'cus_nope'], [a.test, 'x']] as const) {
      const res = await t.request('POST', `/v1/customers/${id}/portal-sessions`, { key, body: {} });
      expect(res.status, id).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing', param: 'id' });
      expect(res.headers.get('request-id')).toMatch(/^req_/);
    }
    expect((await t.sql`select count(*)::int as n from portal_links`)[0]!.n).toBe(before);
  });

  it.each([
    [{ url: 'x' }, 'parameter_unknown', 'url'],
    [{ return_url: 'http://tea.example/' }, 'parameter_invalid', 'return_url'],
    [{ return_url: 'not a url' }, 'parameter_invalid', 'return_url'],
    [{ return_url: 'https://user:pw@tea.example/' }, 'parameter_invalid', 'return_url'],
    [{ return_url: 'javascript:alert(1)' }, 'parameter_invalid', 'return_url'],
    [{ return_url: `https://tea.example/${'a'.repeat(2048)}` }, 'parameter_invalid', 'return_url'],
    [{ return_url: 42 }, 'parameter_invalid', 'return_url'],
  ])('when the body is %j, then 400 %s naming %s', async (body, code, param) => {
    const cus = await createCustomer(t, a.test, { email: 'valid@example.com' });
    const res = await t.request('POST', `/v1/customers/${cus.id}/portal-sessions`, { key: a.test, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
  });

  it("when return_url is on the service's own origin (plain http in development), then it is accepted", async () => {
    const cus = await createCustomer(t, a.test, { email: 'own@example.com' });
    const res = await t.request('POST', `/v1/customers/${cus.id}/portal-sessions`, { key: a.test, body: { return_url: `${t.url}/somewhere` } });
    expect(res.status).toBe(200);
  });

  it('when an Idempotency-Key is sent, then 400 idempotency_key_invalid (the answer holds a live link, never stored); without a key, 401', async () => {
    const cus = await createCustomer(t, a.test, { email: 'idem@example.com' });
    const res = await t.request('POST', `/v1/customers/${cus.id}/portal-sessions`, { key: a.test, body: {}, headers: { 'idempotency-key': 'k1' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_invalid' });
    expect(await t.sql`select 1 from idempotency_keys where key = 'k1'`).toHaveLength(0);
    expect((await t.request('POST', `/v1/customers/${cus.id}/portal-sessions`, { body: {} })).status).toBe(401);
    // The customers routes behind it still take Idempotency-Key.
    const created = await t.request('POST', '/v1/customers', { key: a.test, body: { email: 'k2@example.com' }, headers: { 'idempotency-key': 'k2' } });
    expect(created.status).toBe(200);
  });
});

describe('the hourly clean-up', () => {
  it('when sessions are past a limit and links long spent or expired, then the maintenance job deletes them and keeps the live ones', async () => {
    const { maintenanceWorker } = await import('../../workers/maintenance.ts');
    const run = () => maintenanceWorker.process({ name: 'portal-sessions-cleanup' } as never, t.s) as Promise<{ removed: number }>;
    await run(); // what the tests above left
    const cus = await createCustomer(t, a.test, { email: 'sweep@example.com' });
    const live = new PortalClient(t);
    await live.follow((await merchantLink(t, a.test, cus.id)).url);
    const idle = new PortalClient(t);
    await idle.follow((await merchantLink(t, a.test, cus.id)).url);
    const fresh = await merchantLink(t, a.test, cus.id); // unused, valid
    const stale = await merchantLink(t, a.test, cus.id);
    await t.sql`update portal_links set expires_at = now() - interval '2 days' where token_hash = ${hashPortalToken(tokenOf(stale.url))}`;
    await t.sql`update portal_links set used_at = now() - interval '2 days' where customer_id = ${cus.id} and used_at is not null`;
    await t.sql`update portal_sessions set last_seen_at = now() - interval '1 hour' where token_hash = ${hashPortalToken(idle.cookies.get('portal_session')!)}`;
    expect((await run()).removed).toBe(4); // one session, three links (two used, one expired)
    expect((await live.get(`/portal/${a.accountId}/payments`)).status).toBe(200);
    expect(await t.sql`select 1 from portal_links where customer_id = ${cus.id}`).toHaveLength(1);
    expect((await new PortalClient(t).follow(fresh.url)).status).toBe(303);
    expect((await run()).removed).toBe(0);
  });
});
