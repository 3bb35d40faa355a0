import { describe, expect, it } from 'vitest';
import { hashToken } from '../../src/dashboard/store.ts';
import { secondWebApp, useTestServer } from '../helpers/server.ts';
import { createUser, DashClient, PASSWORD, signedIn } from './client.ts';
import { enrolTotp, recoveryCodesOf, secretOf, totpCode } from './two-factor-client.ts';

// Issue 25, point 3: TOTP with recovery codes, through HTTP with real codes computed by otplib,
// then checked in the database and the audit log.
const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });

const STEP = '/dashboard/sign-in/two-factor';
const hasSession = (setCookies: string[]) => setCookies.some((c) => c.startsWith('dash_session=') && !/max-age=0/i.test(c));
const auditOf = (accountId: string) =>
  t.sql<{ action: string; actor_id: string; actor_label: string; ip_address: string; data: Record<string, unknown>; object_id: string }[]>`
    select action, actor_id, actor_label, ip_address, data, object_id from audit_events
    where account_id = ${accountId} and action not in ('user.signed_in', 'user.sign_in_failed') order by id`; // sign-ins: test/dashboard/audit-log.test.ts

/** dashboard_second_factor_attempts_total for codes, by outcome. */
const counted = async (outcome: string) =>
  (await t.s.metrics.secondFactorAttempts.get()).values.find((v) => v.labels.method === 'code' && v.labels.outcome === outcome)?.value ?? 0;

/** Signs in with the password: the answer sends to the second step. */
async function password(email: string): Promise<DashClient> {
  const c = new DashClient(t);
  const res = await c.signIn(email, PASSWORD);
  expect(res.status).toBe(303);
  expect(res.location).toBe(STEP);
  expect(hasSession(res.setCookies)).toBe(false);
  await c.get(STEP);
  return c;
}

describe('enrolling an authenticator app from the security page', () => {
  it('when a user sets it up, then the key is shown once (text, otpauth URI, QR code drawn here), a wrong first code is refused, and the right one turns it on with 10 recovery codes stored hashed', async () => {
    const { accountId } = await t.account();
    const c = await signedIn(t, accountId, 'enrol@example.com');
    const page = await c.get('/dashboard/security');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h1>Security</h1>');
    expect(page.html).toMatch(/<a href="\/dashboard\/security" aria-current="page">Security<\/a>/);
    expect(page.html).toContain('Set up an authenticator app');

    const started = await c.post('/dashboard/security/totp', {});
    expect(started.status).toBe(200);
    const secret = secretOf(started.html);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.html).toContain('otpauth://totp/');
    expect(started.html).toMatch(/<div class="qr" role="img" aria-label="QR code of the setup key"><svg[^>]*>/);
    expect(started.html).not.toMatch(/<img[^>]+qr/i); // no outside service draws it
    // Shown once: the page afterwards asks for the code without the key.
    const later = await c.get('/dashboard/security');
    expect(later.html).not.toContain(secret);
    expect(later.html).toContain('Code from your app');
    const [pending] = await t.sql`select totp_secret, totp_enabled_at from dashboard_users where email = 'enrol@example.com'`;
    expect(pending!.totp_secret).toBe(secret);
    expect(pending!.totp_enabled_at).toBeNull();

    const wrongCode = (Number(await totpCode(secret)) + 1) % 1_000_000;
    const wrong = await c.post('/dashboard/security/totp/confirm', { code: String(wrongCode).padStart(6, '0') });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('That code is not right');
    expect((await t.sql`select totp_enabled_at from dashboard_users where email = 'enrol@example.com'`)[0]!.totp_enabled_at).toBeNull();

    const done = await c.post('/dashboard/security/totp/confirm', { code: await totpCode(secret) });
    expect(done.status).toBe(200);
    const codes = recoveryCodesOf(done.html);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    expect(done.html).toContain('shown only once');
    const stored = await t.sql<{ code_hash: Buffer }[]>`select code_hash from dashboard_recovery_codes r join dashboard_users u on u.id = r.user_id where u.email = 'enrol@example.com'`;
    expect(stored.map((r) => r.code_hash.toString('hex')).sort()).toEqual(codes.map((x) => hashToken(x.replaceAll('-', '')).toString('hex')).sort());
    const after = await c.get('/dashboard/security');
    expect(after.html).toContain('10 of 10 recovery codes left');
    for (const code of codes) expect(after.html).not.toContain(code);

    const audit = await auditOf(accountId);
    expect(audit.map((a) => a.action)).toEqual(['user.two_factor_enabled']);
    expect(audit[0]!.actor_label).toBe('enrol@example.com');
    expect(audit[0]!.data).toEqual({ method: 'totp' });
    expect(JSON.stringify(audit)).not.toContain(secret);
  });
});

describe('signing in with the authenticator app', () => {
  it('when the password is right, then no session starts until the code: the step token opens no other page, a wrong or replayed code is refused, the right one signs in', async () => {
    const { accountId } = await t.account();
    const setup = await signedIn(t, accountId, 'totp@example.com');
    const { secret, code: enrolled } = await enrolTotp(setup); // takes the code of the current time step

    const before = { refused: await counted('refused'), accepted: await counted('accepted') };
    const c = new DashClient(t);
    const res = await c.signIn('totp@example.com', PASSWORD);
    expect(res.status).toBe(303);
    expect(res.location).toBe(STEP);
    const step = res.setCookies.find((x) => x.startsWith('dash_step='))!;
    expect(step).toMatch(/; Path=\/dashboard\/sign-in/);
    expect(step).toMatch(/; HttpOnly/);
    expect(hasSession(res.setCookies)).toBe(false);
    // Half signed in is not signed in: the dashboard answers sign-in, even given the step token as a session.
    for (const path of ['/dashboard', '/dashboard/security', '/dashboard/payments']) expect((await c.get(path)).location).toBe('/dashboard/sign-in');
    const token = step.split(';')[0]!.split('=')[1]!;
    const forged = await fetch(`${t.url}/dashboard`, { headers: { cookie: `dash_session=${token}` }, redirect: 'manual' });
    expect(forged.status).toBe(303);

    const page = await c.get(STEP);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Code from your authenticator app');
    expect((await c.post(STEP, { code: '000000' === (await totpCode(secret)) ? '111111' : '000000' })).status).toBe(401);
    // The code taken at enrolment is a replay (the same time step, or an earlier one if the clock
    // has moved on since: both at or before the last step accepted).
    const replay = await c.post(STEP, { code: enrolled });
    expect(replay.status).toBe(401);
    expect(replay.html).toContain('or was used already');

    const next = await totpCode(secret, 30);
    const ok = await c.post(STEP, { code: `${next.slice(0, 3)} ${next.slice(3)}` });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/dashboard');
    expect(hasSession(ok.setCookies)).toBe(true);
    expect((await c.get('/dashboard')).status).toBe(200);
    expect({ refused: await counted('refused'), accepted: await counted('accepted') }).toEqual({ refused: before.refused + 2, accepted: before.accepted + 1 });
    // The step is spent: it cannot give a second session.
    expect((await t.sql`select 1 from dashboard_sign_in_steps s join dashboard_users u on u.id = s.user_id where u.email = 'totp@example.com'`).length).toBe(0);

    // The same code again, in a new sign-in within its window: refused.
    const again = await password('totp@example.com');
    expect((await again.post(STEP, { code: next })).status).toBe(401);
  });

  it('when a recovery code is used, then it signs in once, is recorded in the audit log, and is refused the second time', async () => {
    const { accountId } = await t.account();
    const setup = await signedIn(t, accountId, 'recovery@example.com');
    const { codes } = await enrolTotp(setup);

    const c = await password('recovery@example.com');
    const ok = await c.post(STEP, { code: codes[3]!.toUpperCase() });
    expect(ok.status).toBe(303);
    expect(hasSession(ok.setCookies)).toBe(true);
    const [used] = await t.sql`
      select count(*)::int as n from dashboard_recovery_codes r join dashboard_users u on u.id = r.user_id
      where u.email = 'recovery@example.com' and r.used_at is not null`;
    expect(used!.n).toBe(1);
    const audit = await auditOf(accountId);
    expect(audit.map((a) => a.action)).toEqual(['user.two_factor_enabled', 'user.recovery_code_used']);
    expect(audit[1]!.ip_address).toBeTruthy();
    expect(JSON.stringify(audit)).not.toContain(codes[3]!);

    const twice = await password('recovery@example.com');
    expect((await twice.post(STEP, { code: codes[3]! })).status).toBe(401);
    expect((await twice.post(STEP, { code: codes[4]! })).status).toBe(303);
    expect((await c.get('/dashboard/security')).html).toContain('8 of 10 recovery codes left');
  });

  it('when five wrong codes are typed, then the step ends and the password is asked again', async () => {
    const { accountId } = await t.account();
    const setup = await signedIn(t, accountId, 'five@example.com');
    const { secret } = await enrolTotp(setup);
    const c = await password('five@example.com');
    const right = await totpCode(secret, 30);
    const wrong = right === '123456' ? '654321' : '123456';
    for (let i = 0; i < 4; i++) expect((await c.post(STEP, { code: wrong })).status).toBe(401);
    const last = await c.post(STEP, { code: wrong });
    expect(last.status).toBe(303);
    expect(last.location).toBe('/dashboard/sign-in?too_many_codes=1');
    expect((await c.get('/dashboard/sign-in?too_many_codes=1')).html).toContain('Too many wrong codes');
    const gone = await c.send('POST', STEP, { _csrf: c.token, code: right });
    expect(gone.status).toBe(303);
    expect(gone.location).toBe('/dashboard/sign-in?step_expired=1');
    expect(hasSession(gone.setCookies)).toBe(false);
  });

  it('when a second-step form comes without its CSRF token, then it is refused', async () => {
    const { accountId } = await t.account();
    const setup = await signedIn(t, accountId, 'csrf2fa@example.com');
    const { secret } = await enrolTotp(setup);
    const c = await password('csrf2fa@example.com');
    const res = await c.send('POST', STEP, { code: await totpCode(secret, 30) });
    expect(res.status).toBe(403);
    expect(hasSession(res.setCookies)).toBe(false);
  });

  it('when the user turns the app off with a code, then it is recorded, the recovery codes die and sign-in needs only the password', async () => {
    const { accountId } = await t.account();
    const c = await signedIn(t, accountId, 'off@example.com');
    const { secret } = await enrolTotp(c);
    await c.get('/dashboard/security');
    const refused = await c.post('/dashboard/security/totp/off', { code: 'not a code' });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('That code is not right');
    const off = await c.post('/dashboard/security/totp/off', { code: await totpCode(secret, 30) });
    expect(off.status).toBe(303);
    expect(off.location).toBe('/dashboard/security?done=totp_off');
    const [row] = await t.sql`select totp_secret, (select count(*)::int from dashboard_recovery_codes r where r.user_id = u.id) as codes from dashboard_users u where email = 'off@example.com'`;
    expect(row).toEqual({ totp_secret: null, codes: 0 });
    expect((await auditOf(accountId)).map((a) => a.action)).toEqual(['user.two_factor_enabled', 'user.two_factor_disabled']);
    const plain = await new DashClient(t).signIn('off@example.com', PASSWORD);
    expect(plain.location).toBe('/dashboard');
  });

  it('when new recovery codes are made, then the old ones stop working', async () => {
    const { accountId } = await t.account();
    const c = await signedIn(t, accountId, 'renew@example.com');
    const { codes: old } = await enrolTotp(c);
    await c.get('/dashboard/security');
    const renewed = await c.post('/dashboard/security/recovery-codes', {});
    const fresh = recoveryCodesOf(renewed.html);
    expect(fresh).toHaveLength(10);
    const s1 = await password('renew@example.com');
    expect((await s1.post(STEP, { code: old[0]! })).status).toBe(401);
    expect((await s1.post(STEP, { code: fresh[0]! })).status).toBe(303);
    expect((await auditOf(accountId)).map((a) => a.action)).toContain('user.recovery_codes_regenerated');
  });
});

describe('two web processes', () => {
  it('when the password is typed on one web process and the code on another, then the step (a row, not memory) signs the user in', async () => {
    const { accountId } = await t.account();
    const setup = await signedIn(t, accountId, 'twoweb@example.com');
    const { secret } = await enrolTotp(setup);
    const other = await secondWebApp(t);
    try {
      const c = await password('twoweb@example.com');
      await c.get(`${other.url}${STEP}`);
      const ok = await c.post(`${other.url}${STEP}`, { code: await totpCode(secret, 30) });
      expect(ok.status).toBe(303);
      expect(hasSession(ok.setCookies)).toBe(true);
      expect((await c.get('/dashboard')).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('a user without two-factor', () => {
  it('when they sign in, then the password alone starts the session, as before', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'plain@example.com');
    const res = await new DashClient(t).signIn('plain@example.com', PASSWORD);
    expect(res.location).toBe('/dashboard');
    expect(hasSession(res.setCookies)).toBe(true);
  });
});
