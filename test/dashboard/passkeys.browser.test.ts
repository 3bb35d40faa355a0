import { mkdir } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitsWidth, launchBrowser, withPage, DESKTOP, PHONE } from '../helpers/browser.ts';
import { useTestServer } from '../helpers/server.ts';
import { createUser, cspViolations, DashClient, PASSWORD, signInBrowser, SHOTS } from './client.ts';
import { enrolTotp, totpCode } from './two-factor-client.ts';

// Issue 25, point 3: passkeys in Chromium with its virtual authenticator (CDP WebAuthn, ctap2,
// internal transport, resident keys, user verification): added from the Security page, asked as
// the second factor after the password, set up at sign-in where the account requires two-factor.
// The service's address is http://localhost:<port>: WebAuthn refuses an IP address as the rpID.
// Screenshots of every new page go to test/artifacts/dashboard.

const t = useTestServer({ host: 'localhost', env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
  await mkdir(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

/** A virtual platform authenticator (a laptop's fingerprint reader) in the page's browser context. */
async function virtualAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return { credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials };
}

const shot = (page: Page, name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

async function signInWithPassword(page: Page, email: string) {
  await page.goto(`${t.url}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

// Each test drives several pages in one Chromium: 90 s each, for a machine whose two cores are busy.
describe('passkeys', { timeout: 90_000 }, () => {
  it('when a user adds a passkey on the Security page, then the next sign-in asks for it after the password and it signs them in; its answer cannot be replayed', async () => {
    const { accountId } = await t.account();
    await t.sql`update accounts set business_name = 'The Tea Room' where id = ${accountId}`;
    const email = 'passkey@example.com';
    const answers: string[] = [];
    await withPage(browser, DESKTOP, async (page, context) => {
      const csp = cspViolations(page);
      const auth = await virtualAuthenticator(context, page);
      await signInBrowser(page, t, accountId, email);
      await page.getByRole('link', { name: 'Security' }).click();
      await page.waitForURL(`${t.url}/dashboard/security`);
      await shot(page, 'security-off');
      await page.getByLabel('Name of the passkey').fill('Work laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.waitForURL(`${t.url}/dashboard/security?done=passkey_added`);
      await expect(page.getByRole('cell', { name: 'Work laptop', exact: true }).isVisible()).resolves.toBe(true);
      await shot(page, 'security-passkey-added');
      expect(await auth.credentials()).toHaveLength(1);
      const [row] = await t.sql`select p.name, p.credential_id, p.transports from dashboard_passkeys p join dashboard_users u on u.id = p.user_id where u.email = ${email}`;
      expect(row!.name).toBe('Work laptop');
      expect(row!.transports).toEqual(['internal']);
      const [audit] = await t.sql`select action, actor_label, data from audit_events where account_id = ${accountId} and action like 'user.passkey%'`;
      expect(audit).toEqual({ action: 'user.passkey_added', actor_label: email, data: { name: 'Work laptop' } });

      await page.getByRole('button', { name: 'Sign out' }).click();
      page.on('request', (r) => {
        if (r.url().endsWith('/dashboard/sign-in/two-factor/passkey') && r.method() === 'POST') answers.push(r.postData() ?? '');
      });
      await signInWithPassword(page, email);
      await page.waitForURL(`${t.url}/dashboard/sign-in/two-factor`);
      // Half signed in: the dashboard is not open yet.
      expect((await page.request.get(`${t.url}/dashboard`, { maxRedirects: 0 })).headers().location).toBe('/dashboard/sign-in');
      await shot(page, 'sign-in-passkey-step');
      await page.getByRole('button', { name: 'Use your passkey' }).click();
      await page.waitForURL(`${t.url}/dashboard`);
      await expect(page.locator('h1').textContent()).resolves.toBe('Home');
      const [used] = await t.sql`select p.last_used_at from dashboard_passkeys p join dashboard_users u on u.id = p.user_id where u.email = ${email}`;
      expect(used!.last_used_at).toBeInstanceOf(Date);
      expect(csp).toEqual([]);
    });

    // The browser's signed answer, posted again in a new sign-in: its challenge was taken, so it is refused.
    expect(answers).toHaveLength(1);
    const credential = new URLSearchParams(answers[0]).get('credential')!;
    expect(JSON.parse(credential).type).toBe('public-key');
    const c = new DashClient(t);
    expect((await c.signIn(email, PASSWORD)).location).toBe('/dashboard/sign-in/two-factor');
    await c.get('/dashboard/sign-in/two-factor');
    const replay = await c.post('/dashboard/sign-in/two-factor/passkey', { credential });
    expect(replay.status).toBe(401);
    expect(replay.html).toContain('That passkey was not accepted');
    expect(replay.setCookies.some((x) => x.startsWith('dash_session='))).toBe(false);
    const junk = await c.post('/dashboard/sign-in/two-factor/passkey', { credential: '{"id":"x"' });
    expect(junk.status).toBe(401);
  });

  it('when the account requires two-factor, then a user without a factor registers a passkey right after the password and only then reaches the dashboard', async () => {
    const { accountId } = await t.account();
    const owner = new DashClient(t);
    await createUser(t, accountId, 'owner-pk@example.com');
    await owner.signIn('owner-pk@example.com', PASSWORD);
    await enrolTotp(owner);
    await owner.get('/dashboard/security');
    expect((await owner.post('/dashboard/security/required', { required: 'true' })).status).toBe(303);
    await createUser(t, accountId, 'new-pk@example.com');

    for (const [viewport, suffix] of [[PHONE, 'phone'], [DESKTOP, 'desktop']] as const) {
      await withPage(browser, viewport, async (page) => {
        await signInWithPassword(page, 'new-pk@example.com');
        await page.waitForURL(`${t.url}/dashboard/sign-in/enrol`);
        await shot(page, `sign-in-enrol-${suffix}`);
        expect(await fitsWidth(page)).toBe(true);
        if (suffix === 'phone') {
          await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
          await page.getByLabel('Code from your app').waitFor();
          await shot(page, 'sign-in-enrol-totp-phone');
          expect(await fitsWidth(page)).toBe(true);
        }
      });
    }

    await withPage(browser, DESKTOP, async (page, context) => {
      const csp = cspViolations(page);
      const auth = await virtualAuthenticator(context, page);
      await signInWithPassword(page, 'new-pk@example.com');
      await page.waitForURL(`${t.url}/dashboard/sign-in/enrol`);
      await page.getByLabel('Name of the passkey').fill('Phone');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.waitForURL(`${t.url}/dashboard`);
      expect(await auth.credentials()).toHaveLength(1);

      // Their only factor, while the account requires one: it cannot be removed.
      await page.goto(`${t.url}/dashboard/security`);
      await page.getByRole('button', { name: 'Remove the passkey Phone' }).click();
      await page.getByText('This account requires two-factor sign-in').waitFor();
      expect((await t.sql`select 1 from dashboard_passkeys p join dashboard_users u on u.id = p.user_id where u.email = 'new-pk@example.com'`).length).toBe(1);
      // Once it is no longer required, it can.
      await owner.get('/dashboard/security');
      expect((await owner.post('/dashboard/security/required', { required: 'false' })).status).toBe(303);
      await page.goto(`${t.url}/dashboard/security`);
      await page.getByRole('button', { name: 'Remove the passkey Phone' }).click();
      await page.waitForURL(`${t.url}/dashboard/security?done=passkey_removed`);
      expect((await t.sql`select 1 from dashboard_passkeys p join dashboard_users u on u.id = p.user_id where u.email = 'new-pk@example.com'`).length).toBe(0);
      expect(csp).toEqual([]);
    });
    const actions = await t.sql`select action, actor_label from audit_events where account_id = ${accountId} and actor_label = 'new-pk@example.com' order by id`;
    // The session opened after enrolment is recorded too (user.signed_in, issue 25's audit log), once.
    expect(actions.map((a) => a.action)).toEqual(['user.passkey_added', 'user.signed_in', 'user.passkey_removed']);
  });

  it('when the Security page is opened on a phone with the authenticator app set up, then it fits and shows the key once', async () => {
    const { accountId } = await t.account();
    await withPage(browser, PHONE, async (page) => {
      const csp = cspViolations(page);
      await signInBrowser(page, t, accountId, 'phone@example.com');
      await page.goto(`${t.url}/dashboard/security`);
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await page.getByLabel('Code from your app').waitFor();
      await expect(page.locator('.qr svg').isVisible()).resolves.toBe(true);
      await shot(page, 'security-totp-setup-phone');
      expect(await fitsWidth(page)).toBe(true);
      expect(csp).toEqual([]);
    });
  });
});

describe('the authenticator app in Chromium', { timeout: 90_000 }, () => {
  it('when a user turns it on from the Security page, then the key and the recovery codes are each shown once', async () => {
    const { accountId } = await t.account();
    const email = 'app@example.com';
    await withPage(browser, DESKTOP, async (page) => {
      const csp = cspViolations(page);
      await signInBrowser(page, t, accountId, email);
      await page.goto(`${t.url}/dashboard/security`);
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const uri = await page.locator('[data-totp-uri]').textContent();
      const secret = new URL(uri!).searchParams.get('secret')!;
      await shot(page, 'security-totp-setup');
      await page.getByLabel('Code from your app').fill(await totpCode(secret));
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      await expect(page.locator('[data-recovery-codes] li').count()).resolves.toBe(10);
      await shot(page, 'security-recovery-codes');
      await page.goto(`${t.url}/dashboard/security`);
      await expect(page.locator('[data-recovery-codes]').count()).resolves.toBe(0);
      await shot(page, 'security-totp-on');
      expect(csp).toEqual([]);
    });
  });

  it('when a user with the app signs in, then the code step refuses a wrong code and lets the right one in, on a desktop and a phone', async () => {
    const { accountId } = await t.account();
    const email = 'app-step@example.com';
    await createUser(t, accountId, email);
    const setup = new DashClient(t);
    await setup.signIn(email, PASSWORD);
    const { secret } = await enrolTotp(setup);
    await withPage(browser, DESKTOP, async (page) => {
      const csp = cspViolations(page);
      await signInWithPassword(page, email);
      await page.waitForURL(`${t.url}/dashboard/sign-in/two-factor`);
      await page.getByLabel('Code from your authenticator app').fill('000000' === (await totpCode(secret, 30)) ? '111111' : '000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByText('That code is not right').waitFor();
      await shot(page, 'sign-in-code-step-error');
      await page.getByLabel('Code from your authenticator app').fill(await totpCode(secret, 30));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${t.url}/dashboard`);
      expect(csp).toEqual([]);
    });
    await withPage(browser, PHONE, async (page) => {
      await signInWithPassword(page, email);
      await page.waitForURL(`${t.url}/dashboard/sign-in/two-factor`);
      await shot(page, 'sign-in-code-step-phone');
      expect(await fitsWidth(page)).toBe(true);
    });
  });

  it('when the account requires two-factor and a user sets up the app at sign-in, then the recovery codes page leads to the dashboard', async () => {
    const { accountId } = await t.account();
    const owner = new DashClient(t);
    await createUser(t, accountId, 'owner-app@example.com');
    await owner.signIn('owner-app@example.com', PASSWORD);
    await enrolTotp(owner);
    await owner.get('/dashboard/security');
    expect((await owner.post('/dashboard/security/required', { required: 'true' })).status).toBe(303);
    await createUser(t, accountId, 'new-app@example.com');
    await withPage(browser, PHONE, async (page) => {
      await signInWithPassword(page, 'new-app@example.com');
      await page.waitForURL(`${t.url}/dashboard/sign-in/enrol`);
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const uri = await page.locator('[data-totp-uri]').textContent();
      await page.getByLabel('Code from your app').fill(await totpCode(new URL(uri!).searchParams.get('secret')!));
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
      await expect(page.locator('[data-recovery-codes] li').count()).resolves.toBe(10);
      await shot(page, 'sign-in-enrol-done-phone');
      expect(await fitsWidth(page)).toBe(true);
      await page.getByRole('link', { name: 'Continue to the dashboard' }).click();
      await page.waitForURL(`${t.url}/dashboard`);
      await expect(page.locator('h1').textContent()).resolves.toBe('Home');
    });
  });
});
