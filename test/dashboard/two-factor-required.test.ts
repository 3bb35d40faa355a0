import { describe, expect, it } from 'vitest';
import { maintenanceWorker } from '../../workers/maintenance.ts';
import { useTestServer } from '../helpers/server.ts';
import { createUser, DashClient, PASSWORD, signedIn } from './client.ts';
import { enrolTotp, recoveryCodesOf, secretOf, totpCode } from './two-factor-client.ts';

// Issue 25, point 3: an owner requires two-factor for every user of the account; a user without a
// second factor is then sent to set one up right after the password, before any session. And the
// second step's codes are throttled as passwords are (src/dashboard/throttle.ts).
const hasSession = (setCookies: string[]) => setCookies.some((c) => c.startsWith('dash_session=') && !/max-age=0/i.test(c));

describe('requiring two-factor for every user', () => {
  const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });
  const requirement = async (accountId: string) => (await t.sql`select require_two_factor from accounts where id = ${accountId}`)[0]!.require_two_factor as boolean;

  it('when an owner without a second factor asks, then it is refused: they set one up first', async () => {
    const { accountId } = await t.account();
    const owner = await signedIn(t, accountId, 'owner-none@example.com');
    await owner.get('/dashboard/security');
    const res = await owner.post('/dashboard/security/required', { required: 'true' });
    expect(res.status).toBe(400);
    expect(res.html).toContain('Set up an authenticator app or a passkey for yourself first.');
    expect(await requirement(accountId)).toBe(false);
  });

  it('when the owner turns it on, then the sessions of users without a second factor end, and such a user must enrol after the password before any page', async () => {
    const { accountId } = await t.account();
    const owner = await signedIn(t, accountId, 'owner@example.com');
    await enrolTotp(owner);
    const colleague = await signedIn(t, accountId, 'colleague@example.com');
    expect((await colleague.get('/dashboard')).status).toBe(200);

    await owner.get('/dashboard/security');
    const on = await owner.post('/dashboard/security/required', { required: 'true' });
    expect(on.status).toBe(303);
    expect(on.location).toBe('/dashboard/security?done=required_on');
    expect(await requirement(accountId)).toBe(true);
    expect((await owner.get('/dashboard')).status).toBe(200); // the owner's own session goes on
    expect((await colleague.get('/dashboard')).location).toBe('/dashboard/sign-in'); // signed out at once
    const [audit] = await t.sql`select action, actor_label, data, livemode from audit_events where account_id = ${accountId} and action like 'account.%'`;
    expect(audit).toEqual({ action: 'account.two_factor_requirement_updated', actor_label: 'owner@example.com', data: { require_two_factor: true, sessions_ended: 1 }, livemode: null });

    // The colleague's password now leads to enrolment, and nothing else works until it is done.
    const c = new DashClient(t);
    const pw = await c.signIn('colleague@example.com', PASSWORD);
    expect(pw.status).toBe(303);
    expect(pw.location).toBe('/dashboard/sign-in/enrol');
    expect(hasSession(pw.setCookies)).toBe(false);
    expect((await c.get('/dashboard')).location).toBe('/dashboard/sign-in');
    expect((await c.get('/dashboard/sign-in/two-factor')).location).toBe('/dashboard/sign-in?step_expired=1'); // a step of the other kind
    const c2 = new DashClient(t);
    await c2.signIn('colleague@example.com', PASSWORD);
    const page = await c2.get('/dashboard/sign-in/enrol');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Your account requires two-factor sign-in');
    const started = await c2.post('/dashboard/sign-in/enrol/totp', {});
    expect(started.status).toBe(200);
    const secret = secretOf(started.html);
    const wrong = await c2.post('/dashboard/sign-in/enrol/totp/confirm', { code: 'abcdef' });
    expect(wrong.status).toBe(400);
    expect(hasSession(wrong.setCookies)).toBe(false);
    const done = await c2.post('/dashboard/sign-in/enrol/totp/confirm', { code: await totpCode(secret) });
    expect(done.status).toBe(200);
    expect(recoveryCodesOf(done.html)).toHaveLength(10);
    expect(hasSession(done.setCookies)).toBe(true);
    expect((await c2.get('/dashboard')).status).toBe(200);
    const actions = await t.sql`select action, actor_label from audit_events where account_id = ${accountId} order by id`;
    // Enrolled first, then the session opened (user.signed_in), as the audit log records them.
    expect(actions.slice(-2)).toEqual([
      { action: 'user.two_factor_enabled', actor_label: 'colleague@example.com' },
      { action: 'user.signed_in', actor_label: 'colleague@example.com' },
    ]);

    // Next time: the code, as for anyone with a second factor.
    const later = await new DashClient(t).signIn('colleague@example.com', PASSWORD);
    expect(later.location).toBe('/dashboard/sign-in/two-factor');
  });

  it('when it is required, then the only factor cannot be turned off; when the owner turns it off, then it is recorded', async () => {
    const { accountId } = await t.account();
    const owner = await signedIn(t, accountId, 'owner2@example.com');
    const { secret } = await enrolTotp(owner);
    await owner.get('/dashboard/security');
    expect((await owner.post('/dashboard/security/required', { required: 'true' })).status).toBe(303);
    await owner.get('/dashboard/security');
    const off = await owner.post('/dashboard/security/totp/off', { code: await totpCode(secret, 30) });
    expect(off.status).toBe(400);
    expect(off.html).toContain('This account requires two-factor sign-in');
    expect((await t.sql`select totp_enabled_at from dashboard_users where email = 'owner2@example.com'`)[0]!.totp_enabled_at).not.toBeNull();
    await owner.get('/dashboard/security');
    expect((await owner.post('/dashboard/security/required', { required: 'false' })).location).toBe('/dashboard/security?done=required_off');
    expect(await requirement(accountId)).toBe(false);
    const audit = await t.sql`select data from audit_events where account_id = ${accountId} and action = 'account.two_factor_requirement_updated' order by id`;
    expect(audit.map((a) => a.data.require_two_factor)).toEqual([true, false]);
  });

  it('when a user whose role may not manage the team posts the form anyway, then it is refused on the server (403) and the page offers no such form', async () => {
    const { accountId } = await t.account();
    const analyst = await signedIn(t, accountId, 'analyst@example.com');
    await enrolTotp(analyst);
    await t.sql`update dashboard_users set role = 'analyst' where email = 'analyst@example.com'`;
    const page = await analyst.get('/dashboard/security');
    expect(page.html).not.toContain('/dashboard/security/required');
    const forged = await analyst.post('/dashboard/security/required', { required: 'true' });
    expect(forged.status).toBe(403);
    expect(await requirement(accountId)).toBe(false);
    expect((await t.sql`select 1 from audit_events where account_id = ${accountId} and action like 'account.%'`).length).toBe(0);
  });
});

describe('throttling the second step', () => {
  const t = useTestServer({ env: { TRUST_PROXY: 'loopback', DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '3', DASHBOARD_SIGN_IN_SLOWDOWN_PER_EMAIL_PER_HOUR: '0' } });

  it('when one address types 3 wrong codes for a user, then it is refused (429, Retry-After) even with the right code; the user from another address signs in', async () => {
    const { accountId } = await t.account();
    const setup = await signedIn(t, accountId, 'guarded@example.com');
    const { secret } = await enrolTotp(setup);
    const a = new DashClient(t, { 'x-forwarded-for': '203.0.113.20' });
    await a.signIn('guarded@example.com', PASSWORD);
    await a.get('/dashboard/sign-in/two-factor');
    const right = await totpCode(secret, 30);
    const wrong = right === '111111' ? '222222' : '111111';
    for (let i = 0; i < 3; i++) expect((await a.post('/dashboard/sign-in/two-factor', { code: wrong })).status).toBe(401);
    const refused = await a.post('/dashboard/sign-in/two-factor', { code: right });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.html).toContain('Too many attempts');
    expect(hasSession(refused.setCookies)).toBe(false);

    const b = new DashClient(t, { 'x-forwarded-for': '198.51.100.30' });
    await b.signIn('guarded@example.com', PASSWORD);
    await b.get('/dashboard/sign-in/two-factor');
    const ok = await b.post('/dashboard/sign-in/two-factor', { code: right });
    expect(ok.status).toBe(303);
    expect(hasSession(ok.setCookies)).toBe(true);
  });
});

describe('a user of another account', () => {
  const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });

  it('when one account requires two-factor, then another account\'s users sign in with their password alone', async () => {
    const one = await t.account();
    const other = await t.account();
    const owner = await signedIn(t, one.accountId, 'owner-one@example.com');
    await enrolTotp(owner);
    await owner.get('/dashboard/security');
    expect((await owner.post('/dashboard/security/required', { required: 'true' })).status).toBe(303);
    await createUser(t, other.accountId, 'free@example.com');
    expect((await new DashClient(t).signIn('free@example.com', PASSWORD)).location).toBe('/dashboard');
  });
});

describe('the hourly clean-up', () => {
  const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });

  it('when sign-in steps and passkey challenges are past their time, then the dashboard clean-up job deletes them and keeps the live ones', async () => {
    const { accountId } = await t.account();
    const setup = await signedIn(t, accountId, 'sweep2fa@example.com');
    await enrolTotp(setup);
    await setup.get('/dashboard/security'); // hands out a passkey challenge
    await new DashClient(t).signIn('sweep2fa@example.com', PASSWORD); // a step, live
    const id = (await t.sql`select id from dashboard_users where email = 'sweep2fa@example.com'`)[0]!.id as string;
    await t.sql`insert into dashboard_webauthn_challenges (challenge, user_id, purpose, expires_at) values ('old-challenge', ${id}, 'register', now() - interval '1 minute')`;
    await t.sql`insert into dashboard_sign_in_steps (token_hash, user_id, purpose, expires_at) values (${Buffer.alloc(32)}, ${id}, 'verify', now() - interval '1 minute')`;
    const counts = async () => (await t.sql`select (select count(*)::int from dashboard_sign_in_steps) as steps, (select count(*)::int from dashboard_webauthn_challenges) as challenges`)[0];
    const before = await counts();
    expect(before!.steps).toBe(2);
    const result = (await maintenanceWorker.process({ name: 'dashboard-sessions-cleanup' } as never, t.s)) as { removed: number };
    expect(result.removed).toBe(2);
    expect(await counts()).toEqual({ steps: 1, challenges: before!.challenges - 1 });
    expect((await t.sql`select 1 from dashboard_webauthn_challenges where challenge = 'old-challenge'`).length).toBe(0);
  });
});
