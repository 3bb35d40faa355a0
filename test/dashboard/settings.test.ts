import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandCssHash, PAGE_CSS_HASH } from '../../src/pages/layout.ts';
import { Payer, pathOf, type PageAnswer } from '../helpers/payer.ts';
import { runScript } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { StripeStandIn, stripeEnv } from '../helpers/stripe/api.ts';
import { DashClient, formKey, signedIn } from './client.ts';
import { createLink, createSession, sentInvoice } from '../helpers/factories.ts';

// The Settings section (/dashboard/settings): the account's name, support email, brand colour and
// logo, saved in live mode only (issue 21) through PATCH /v1/account's schema and function, and then seen by payers on every
// hosted page (checkout, link, invoice, the Payment Element page) and in emails. Live mode runs on
// the Stripe stand-in, so a live session shows the Payment Element page. Also: the invitation
// email of the Users page.

const api = new StripeStandIn();
beforeAll(async () => {
  await api.start();
});
afterAll(async () => {
  await api.close();
});
const t = useTestServer(() => ({ env: stripeEnv(api) }));

const PATH = '/dashboard/settings';
const LOGO = 'https://cdn.tea.example/brand/logo.png?v=3';
const GOOD = { business_name: 'Tea & Co', support_email: 'Help@Tea.Example', brand_color: '#ffd400', logo_url: LOGO };

/** A signed-in user viewing live data: the settings are changed there only. */
async function signedInLive(accountId: string, email: string): Promise<DashClient> {
  const c = await signedIn(t, accountId, email);
  const switched = await c.post('/dashboard/mode', { mode: 'live', back: PATH });
  if (switched.status !== 303) throw new Error(`mode: ${switched.status}`);
  return c;
}

const settings = async (accountId: string) =>
  (await t.sql`select business_name, support_email, brand_color, logo_url from accounts where id = ${accountId}`)[0]!;

/** The directives of a page's Content-Security-Policy, each a list of sources. */
function csp(page: { headers: Headers }): Map<string, string[]> {
  const header = page.headers.get('content-security-policy') ?? '';
  return new Map(
    header
      .split(';')
      .filter(Boolean)
      .map((d) => {
        const [name, ...sources] = d.trim().split(/\s+/);
        return [name!, sources];
      }),
  );
}

/** A hosted page in the account's brand (GOOD): the logo, the name, the colour, and the CSP allowing exactly them. */
function expectBranded(page: PageAnswer, what: string) {
  expect(page.html, what).toContain(`<img src="${LOGO.replaceAll('&', '&amp;')}" alt="Tea &amp; Co">`);
  expect(page.html, what).toContain('<p class="brand-name">Tea &amp; Co</p>');
  expect(page.html, what).toContain('.btn{background:#ffd400;color:#000000}');
  const p = csp(page);
  expect(p.get('img-src'), what).toContain('https://cdn.tea.example');
  expect(p.get('style-src'), what).toEqual([PAGE_CSS_HASH, brandCssHash('#ffd400')]);
  expect(page.headers.get('content-security-policy'), what).not.toContain('unsafe-inline');
}

describe('the Settings page', () => {
  it('when opened in live mode, then it shows the saved settings, says they are shared by test and live and where payers see them, and previews them', async () => {
    const a = await t.account();
    await t.request('PATCH', '/v1/account', { key: a.live, body: GOOD });
    const c = await signedInLive(a.accountId, 'owner@settings.example');
    const res = await c.get(PATH);
    expect(res.status).toBe(200);
    expect(res.html).toContain('shared by <strong>test and live</strong>');
    expect(res.html).toContain('hosted checkout, payment link and invoice pages and in the emails');
    expect(res.html).toMatch(/id="business_name" name="business_name"[^>]*value="Tea &amp; Co"/);
    expect(res.html).toMatch(/id="support_email" name="support_email"[^>]*value="help@tea.example"/);
    expect(res.html).toMatch(/<input type="color" id="brand_color" name="brand_color"[^>]*value="#ffd400"/);
    // The preview: the logo (its origin allowed here only), and the sample button painted by attributes, black text on yellow.
    expect(res.html).toContain(`<img src="${LOGO}" alt="Tea &amp; Co" data-logo>`);
    expect(res.html).toContain('<rect width="240" height="48" rx="8" fill="#ffd400"/>');
    expect(res.html).toMatch(/<text [^>]*fill="#000000">Pay \$19\.99<\/text>/);
    expect(res.html).not.toMatch(/style="/);
    expect(csp(res).get('img-src')).toEqual(["'self'", 'data:', 'https://cdn.tea.example']);
    // Other dashboard pages do not allow the logo's origin.
    expect(csp(await c.get('/dashboard')).get('img-src')).toEqual(["'self'", 'data:']);
  });

  it('when the form is saved, then GET /v1/account answers the settings in both modes, every hosted page shows them, and emptied fields clear them', async () => {
    const a = await t.account();
    const c = await signedInLive(a.accountId, 'owner@save.example');
    await c.get(PATH);
    const saved = await c.post(PATH, GOOD);
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${PATH}?done=saved`);
    expect(await settings(a.accountId)).toEqual({ business_name: 'Tea & Co', support_email: 'help@tea.example', brand_color: '#ffd400', logo_url: LOGO });
    for (const key of [a.test, a.live]) {
      expect((await t.request('GET', '/v1/account', { key })).body).toMatchObject({ business_name: 'Tea & Co', support_email: 'help@tea.example', brand_color: '#ffd400', logo_url: LOGO });
    }
    const page = await c.get(saved.location!);
    expect(page.html).toContain('Settings saved.');
    // The shell's top bar now shows the new name.
    expect(page.html).toContain('<span class="brand">Tea &amp; Co</span>');

    // Payers see the brand: hosted checkout (test, simulator), payment link, invoice, and the Payment Element page (live, Stripe).
    const cs = await createSession(t, a.test, { description: 'Two teapots' });
    expectBranded(await new Payer(t).get(`/checkout/${cs.id}`), 'checkout');
    const link = await createLink(t, a.test, { description: 'Spring tasting' });
    expectBranded(await new Payer(t).get(pathOf(link.url)), 'payment link');
    const inv = await sentInvoice(t, a.test);
    expectBranded(await new Payer(t).get(pathOf(inv.hosted_invoice_url)), 'invoice');
    const live = await createSession(t, a.live);
    const element = await new Payer(t).get(`/checkout/${live.id}`);
    expect(element.status).toBe(200);
    expect(element.html).toContain('id="payment-element"');
    expectBranded(element, 'payment element');
    // The Payment Element page keeps Stripe's sources beside the brand's.
    expect(csp(element).get('script-src')).toEqual(expect.arrayContaining(["'self'"]));
    expect(csp(element).get('frame-src')?.length).toBeGreaterThan(0);

    // The invoice email queued by the send carries the logo and the button in the brand colour, black text on yellow.
    const [mail] = await t.sql<{ html_body: string }[]>`select html_body from emails where account_id = ${a.accountId} and template = 'invoice'`;
    expect(mail!.html_body).toContain(`<img src="${LOGO.replaceAll('&', '&amp;')}" alt="Tea &amp; Co"`);
    expect(mail!.html_body).toContain('background:#ffd400;color:#000000');

    // Emptied fields clear the settings (null), as null does over the API; the default-colour box clears the colour.
    await c.get(PATH);
    const cleared = await c.post(PATH, { business_name: '', support_email: ' ', brand_color: '#123456', brand_color_default: 'on', logo_url: '' });
    expect(cleared.status).toBe(303);
    expect(await settings(a.accountId)).toEqual({ business_name: null, support_email: null, brand_color: null, logo_url: null });
    const plain = await new Payer(t).get(`/checkout/${(await createSession(t, a.test)).id}`);
    expect(plain.html).not.toContain('class="brand');
    expect(csp(plain).get('img-src')).toEqual(["'self'", 'data:']);
    const form = await c.get(PATH);
    expect(form.html).toMatch(/id="brand_color_default" name="brand_color_default" value="on" checked/);
  });

  it('when a value is not one the API takes, then the page names the problem beside that field (400) and nothing changes', async () => {
    const a = await t.account();
    await t.request('PATCH', '/v1/account', { key: a.live, body: GOOD });
    const before = await settings(a.accountId);
    const c = await signedInLive(a.accountId, 'owner@bad.example');
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ brand_color: 'red' }, 'brand_color', /must be a colour as #rrggbb/],
      [{ brand_color: '#12345' }, 'brand_color', /must be a colour as #rrggbb/],
      [{ logo_url: 'http://tea.example/logo.png' }, 'logo_url', /must be an https URL/],
      [{ logo_url: 'https://user:pw@tea.example/l.png' }, 'logo_url', /must not contain a user name or password/],
      [{ logo_url: 'not a url' }, 'logo_url', /must be an absolute https URL/],
      [{ support_email: 'not an email' }, 'support_email', /must be an email address/],
      [{ business_name: 'x'.repeat(101) }, 'business_name', /at most 100 characters/],
    ];
    for (const [fields, param, message] of cases) {
      await c.get(PATH);
      const res = await c.post(PATH, { ...GOOD, ...fields });
      expect(res.status, param).toBe(400);
      const beside = new RegExp(`<p class="field-error" id="${param}-error">([^<]*)</p>`).exec(res.html);
      expect(beside?.[1], JSON.stringify(fields)).toMatch(message);
      expect(res.html).toContain('Please check the field marked below.');
      // The typed values come back (except what a colour input cannot hold).
      if (param !== 'brand_color') expect(res.html).toContain(`value="${fields[param]!.replaceAll('&', '&amp;')}"`);
    }
    expect(await settings(a.accountId)).toEqual(before);
  });

  it('when the same form is submitted twice, then it is applied once (the second answer goes where the first did)', async () => {
    const a = await t.account();
    const c = await signedInLive(a.accountId, 'owner@twice.example');
    await c.get(PATH);
    const form = { _csrf: c.token, form_mode: 'live', idempotency_key: formKey(), ...GOOD };
    expect((await c.send('POST', PATH, form)).status).toBe(303);
    await t.sql`update accounts set business_name = 'Renamed meanwhile' where id = ${a.accountId}`;
    const again = await c.send('POST', PATH, form);
    expect(again.status).toBe(303);
    expect(again.location).toBe(`${PATH}?done=saved`);
    expect((await settings(a.accountId)).business_name).toBe('Renamed meanwhile');
  });

  it('when opened in test mode, then the settings show without a form, with a way to live mode, and a test-mode post is refused (403) with nothing changed', async () => {
    const a = await t.account();
    await t.request('PATCH', '/v1/account', { key: a.live, body: GOOD });
    const before = await settings(a.accountId);
    const c = await signedIn(t, a.accountId, 'owner@test-mode.example');
    const page = await c.get(PATH);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain(`<form method="post" action="${PATH}"`);
    expect(page.html).not.toContain('name="business_name"');
    expect(page.html).toContain('These settings change what your <strong>live</strong> customers see, so they can be changed in live mode only.');
    expect(page.html).toContain('<dt>Business name</dt><dd>Tea &amp; Co</dd>');
    expect(page.html).toContain('<dt>Support email</dt><dd>help@tea.example</dd>');
    expect(page.html).toMatch(/<input type="hidden" name="mode" value="live"><input type="hidden" name="back" value="\/dashboard\/settings">\s*<button type="submit" class="primary">Switch to live data to change them<\/button>/);
    // A form forged (or kept from live mode) and posted in test mode is refused by the server.
    const refused = await c.send('POST', PATH, { _csrf: c.token, form_mode: 'test', idempotency_key: formKey(), business_name: 'Evil Corp', support_email: 'replies@attacker.example' });
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('need a live key (sk_live_…) or the dashboard in live mode');
    expect(await settings(a.accountId)).toEqual(before);
    // The switch goes to live mode, on this page, with the form.
    const switched = await c.post('/dashboard/mode', { mode: 'live', back: PATH });
    expect(switched.location).toBe(PATH);
    expect((await c.get(PATH)).html).toContain(`<form method="post" action="${PATH}"`);
  });

  it('when there is no session, the CSRF token is wrong, or the mode changed since the form was opened, then nothing changes (303, 403, 409)', async () => {
    const a = await t.account();
    const before = await settings(a.accountId);
    const anon = await new DashClient(t).post(PATH, GOOD);
    expect(anon.status).toBe(303);
    expect(anon.location).toBe('/dashboard/sign-in');
    expect((await new DashClient(t).get(PATH)).location).toBe('/dashboard/sign-in');
    const c = await signedIn(t, a.accountId, 'owner@guard.example');
    await c.get(PATH);
    expect((await c.post(PATH, { ...GOOD, _csrf: 'wrong' })).status).toBe(403);
    expect((await c.post(PATH, { ...GOOD, _csrf: '' })).status).toBe(403);
    const stale = { _csrf: c.token, form_mode: 'test' };
    await c.post('/dashboard/mode', { mode: 'live', back: PATH });
    const res = await c.post(PATH, { ...GOOD, ...stale });
    expect(res.status).toBe(409);
    expect(await settings(a.accountId)).toEqual(before);
    // Opened in live, the same form saves: the settings belong to the account, not the mode.
    await c.get(PATH);
    expect((await c.post(PATH, GOOD)).status).toBe(303);
    expect((await settings(a.accountId)).brand_color).toBe('#ffd400');
  });
});

describe('the invitation email', () => {
  it('when a user invites someone, then an invitation email with the one-time link is queued in the inviter\'s account and mode, and the inviter never sees the link', async () => {
    const a = await t.account();
    await t.request('PATCH', '/v1/account', { key: a.live, body: GOOD });
    const c = await signedIn(t, a.accountId, 'inviter@tea.example');
    await c.get('/dashboard/team');
    const res = await c.post('/dashboard/team/invitations', { email: 'Partner@Tea.Example', role: 'support' });
    expect(res.status).toBe(303);
    const shown = await c.get(res.location!);
    expect(shown.html).toContain('Invitation made.');
    expect(shown.html).not.toContain('set-password?token=');
    const link = /(http:\S+set-password\?token=[A-Za-z0-9_-]{43})/.exec((await t.sql`select text_body from emails where account_id = ${a.accountId}`)[0]!.text_body)![1]!;
    expect(link).toMatch(new RegExp(`^${t.url}/dashboard/set-password\\?token=[A-Za-z0-9_-]{43}$`));
    const [user] = await t.sql<{ id: string }[]>`select id from dashboard_users where account_id = ${a.accountId} and email = 'Partner@Tea.Example'`;
    const emails = await t.sql`select * from emails where account_id = ${a.accountId} and template = 'invitation'`;
    expect(emails).toHaveLength(1);
    const mail = emails[0]!;
    expect(mail).toMatchObject({ livemode: false, to_address: 'Partner@Tea.Example', status: 'PENDING', related_object: user!.id });
    expect(mail.subject).toBe('You are invited to the Tea & Co dashboard');
    expect(mail.text_body).toContain(link);
    expect(mail.text_body).toContain('inviter@tea.example invited you');
    expect(mail.html_body).toContain(`href="${link}"`);
    expect(mail.html_body).toContain('background:#ffd400;color:#000000');
    expect((await c.get('/dashboard/team')).html).not.toContain(link);
    // The API, whose keys are not dashboard users, never shows the link.
    const listed = await t.request('GET', '/v1/emails?template=invitation', { key: a.test });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(link.split('token=')[1]);
    expect(listed.body.data[0].text).toMatch(/^Not shown/);
    // The link works: the invitee chooses a password.
    const invitee = new DashClient(t);
    expect((await invitee.get(pathOf(link))).status).toBe(200);
  });

  it('when the inviter views live data, then the invitation email is a live-mode row; a refused invitation queues none', async () => {
    const a = await t.account();
    const c = await signedIn(t, a.accountId, 'inviter@live.example');
    await c.post('/dashboard/mode', { mode: 'live', back: '/dashboard/team' });
    await c.get('/dashboard/team');
    expect((await c.post('/dashboard/team/invitations', { email: 'second@live.example', role: 'analyst' })).status).toBe(303);
    expect(await t.sql`select livemode from emails where account_id = ${a.accountId} and template = 'invitation'`).toEqual([{ livemode: true }]);
    await c.get('/dashboard/team');
    expect((await c.post('/dashboard/team/invitations', { email: 'SECOND@live.example', role: 'analyst' })).status).toBe(400);
    expect((await c.post('/dashboard/team/invitations', { email: 'not an email', role: 'analyst' })).status).toBe(400);
    expect(await t.sql`select to_address from emails where account_id = ${a.accountId} and template = 'invitation'`).toEqual([{ to_address: 'second@live.example' }]);
  });

  it('when the same invitation form is submitted twice, then one user, one link and one email', async () => {
    const a = await t.account();
    const c = await signedIn(t, a.accountId, 'inviter@twice.example');
    await c.get('/dashboard/team');
    const form = { _csrf: c.token, form_mode: 'test', idempotency_key: formKey(), email: 'once@twice.example', role: 'developer' };
    expect((await c.send('POST', '/dashboard/team/invitations', form)).status).toBe(303);
    const again = await c.send('POST', '/dashboard/team/invitations', form);
    expect(again.status).toBe(303);
    expect(again.location).toBe('/dashboard/team?done=invited_logged');
    expect(await t.sql`select count(*)::int as n from emails where account_id = ${a.accountId} and template = 'invitation'`).toEqual([{ n: 1 }]);
    expect(await t.sql`select count(*)::int as n from dashboard_password_tokens t join dashboard_users u on u.id = t.user_id where u.email = 'once@twice.example'`).toEqual([{ n: 1 }]);
  });
});

describe('npm run users:create', () => {
  it('when a user is created on the command line, then the link is printed and no email is queued', async () => {
    const a = await t.account();
    const env = { PATH: process.env.PATH, DATABASE_URL: t.s.config.databaseUrl, PUBLIC_BASE_URL: t.url, LOG_LEVEL: 'silent' };
    const r = await runScript('scripts/create-user.ts', ['--account', a.accountId, '--email', 'cli@tea.example'], env).done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(new RegExp(`^${t.url}/dashboard/set-password\\?token=[A-Za-z0-9_-]{43}$`));
    expect(await t.sql`select 1 from dashboard_users where account_id = ${a.accountId} and email = 'cli@tea.example'`).toHaveLength(1);
    expect(await t.sql`select id from emails where account_id = ${a.accountId}`).toEqual([]);
  });
});

describe('hosted pages of an account while live payments are off', () => {
  const off = useTestServer();
  it('when a live checkout is opened without live keys, then the "live payments off" page shows the name, logo and colour', async () => {
    const a = await off.account();
    await off.request('PATCH', '/v1/account', { key: a.live, body: GOOD });
    const cs = await off.request('POST', '/v1/checkout/sessions', { key: a.live, body: { amount: 1999, currency: 'usd', success_url: 'https://merchant.example/ok' } });
    const page = await new Payer(off).get(`/checkout/${cs.body.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('cannot take live payments');
    expectBranded(page, 'live payments off');
  });
});
