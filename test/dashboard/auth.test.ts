import { describe, expect, it } from 'vitest';
import { addUser } from '../../src/dashboard/service.ts';
import { useTestServer } from '../helpers/server.ts';
import { createUser, DashClient, PASSWORD, signedIn } from './client.ts';

const t = useTestServer({ env: { DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR: '0', DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR: '0' } });

const PAGES = ['/dashboard', '/dashboard/', '/dashboard/team', '/dashboard/no-such-page'];
const FORMS = ['/dashboard/mode', '/dashboard/sign-out', '/dashboard/team/invitations'];

describe('dashboard sign-in', () => {
  it('signs in with the password chosen through the one-time link, with a fresh HttpOnly SameSite=Lax session cookie', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'Owner@Example.com');
    const c = new DashClient(t);
    const form = await c.get('/dashboard/sign-in');
    expect(form.status).toBe(200);
    expect(form.html).toMatch(/<label for="email">Email<\/label>/);
    expect(form.html).toMatch(/<label for="password">Password<\/label>/);
    const res = await c.post('/dashboard/sign-in', { email: 'owner@EXAMPLE.com', password: PASSWORD });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard');
    const cookie = res.setCookies.find((s) => s.startsWith('dash_session='))!;
    expect(cookie).toMatch(/; Path=\/dashboard/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).not.toMatch(/; Secure/); // plain http here; see the https test below
    const token = cookie.split(';')[0]!.split('=')[1]!;
    const [stored] = await t.sql`select encode(token_hash, 'hex') as h from dashboard_sessions s join dashboard_users u on u.id = s.user_id where u.account_id = ${accountId}`;
    expect(stored!.h).not.toContain(token); // only the hash is stored
    const home = await c.get('/dashboard');
    expect(home.status).toBe(200);
    expect(home.html).toContain('<h1>Home</h1>');
    const [user] = await t.sql`select last_sign_in_at, password_hash from dashboard_users where account_id = ${accountId}`;
    expect(user!.last_sign_in_at).toBeInstanceOf(Date);
    expect(user!.password_hash).toMatch(/^\$argon2id\$/);
  });

  it('answers the same generic error for a wrong password and for an unknown email, and sets no session', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'known@example.com');
    const c = new DashClient(t);
    await c.get('/dashboard/sign-in');
    const wrong = await c.post('/dashboard/sign-in', { email: 'known@example.com', password: 'not the password' });
    const unknown = await c.post('/dashboard/sign-in', { email: 'nobody@example.com', password: PASSWORD });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.html).toContain('Email or password is incorrect.');
      expect(res.setCookies.some((s) => s.startsWith('dash_session='))).toBe(false);
    }
    const strip = (h: string) => h.replace(/value="[^"]*"/g, '');
    expect(strip(wrong.html)).toBe(strip(unknown.html));
    expect((await c.get('/dashboard')).status).toBe(303);
  });

  it('a user without a password yet cannot sign in', async () => {
    const { accountId } = await t.account();
    const r = await addUser(t.sql, accountId, 'pending@example.com', 3600);
    expect(r.ok).toBe(true);
    const res = await new DashClient(t).signIn('pending@example.com', '');
    expect(res.status).toBe(401);
    expect(res.html).toContain('Email or password is incorrect.');
  });

  it('refuses a sign-in post without the CSRF token, or from another site', async () => {
    const { accountId } = await t.account();
    await createUser(t, accountId, 'csrf@example.com');
    const c = new DashClient(t);
    await c.get('/dashboard/sign-in');
    const none = await c.send('POST', '/dashboard/sign-in', { email: 'csrf@example.com', password: PASSWORD });
    expect(none.status).toBe(403);
    const cross = new DashClient(t, { 'sec-fetch-site': 'cross-site' });
    await cross.get('/dashboard/sign-in');
    expect((await cross.post('/dashboard/sign-in', { email: 'csrf@example.com', password: PASSWORD })).status).toBe(403);
  });

  it('rotates the session on sign-in: the session the browser came with ends', async () => {
    const { accountId } = await t.account();
    const c = await signedIn(t, accountId, 'rotate@example.com');
    const first = c.cookies.get('dash_session')!;
    // Signed in already, the sign-in page sends the user home.
    expect((await c.get('/dashboard/sign-in')).location).toBe('/dashboard');
    // A browser holding that session (a planted cookie) that signs in gets a new one.
    const b = new DashClient(t);
    await b.get('/dashboard/sign-in');
    b.cookies.set('dash_session', first);
    const again = await b.post('/dashboard/sign-in', { email: 'rotate@example.com', password: PASSWORD });
    expect(again.status).toBe(303);
    const second = b.cookies.get('dash_session')!;
    expect(second).not.toBe(first);
    const old = new DashClient(t);
    old.cookies.set('dash_session', first);
    expect((await old.get('/dashboard')).status).toBe(303);
    expect((await b.get('/dashboard')).status).toBe(200);
  });
});

describe('signed-out access', () => {
  it('sends every page and every form of the dashboard to the sign-in page (303), never a 200', async () => {
    const c = new DashClient(t);
    for (const path of PAGES) {
      const res = await c.get(path);
      expect(res.status, path).toBe(303);
      expect(res.location, path).toBe('/dashboard/sign-in');
    }
    for (const path of FORMS) {
      const res = await c.send('POST', path, { mode: 'live', email: 'x@example.com' });
      expect(res.status, path).toBe(303);
      expect(res.location, path).toBe('/dashboard/sign-in');
    }
  });

  it('a forged or unknown session cookie is no session', async () => {
    const c = new DashClient(t);
    c.cookies.set('dash_session', 'A'.repeat(43));
    const res = await c.get('/dashboard');
    expect(res.status).toBe(303);
    expect(res.setCookies.some((s) => /^dash_session=;/.test(s))).toBe(true);
  });
});

describe('signed-in forms', () => {
  it('refuses the mode switch, sign-out and invitation without the session’s CSRF token', async () => {
    const { accountId } = await t.account();
    const c = await signedIn(t, accountId, 'forms@example.com');
    for (const path of FORMS) {
      expect((await c.send('POST', path, { mode: 'live', email: 'x@example.com' })).status, path).toBe(403);
      expect((await c.send('POST', path, { _csrf: 'forged', mode: 'live', email: 'x@example.com' })).status, path).toBe(403);
    }
    // Another user's token does not fit this session either.
    const other = await signedIn(t, accountId, 'forms2@example.com');
    expect((await c.send('POST', '/dashboard/sign-out', { _csrf: other.token })).status).toBe(403);
    expect((await c.get('/dashboard')).status).toBe(200);
    expect(await t.sql`select 1 from dashboard_users where email = 'x@example.com'`).toHaveLength(0);
  });

  it('sign-out deletes the session: the same cookie is refused afterwards', async () => {
    const { accountId } = await t.account();
    const c = await signedIn(t, accountId, 'out@example.com');
    const cookie = c.cookies.get('dash_session')!;
    const res = await c.post('/dashboard/sign-out', {});
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/sign-in?signed_out=1');
    expect(res.setCookies.some((s) => /^dash_session=;.*Max-Age=0/.test(s))).toBe(true);
    const replay = new DashClient(t);
    replay.cookies.set('dash_session', cookie);
    expect((await replay.get('/dashboard')).status).toBe(303);
    expect((await c.get('/dashboard/sign-in?signed_out=1')).html).toContain('You are signed out.');
  });

  it('a session unused for longer than the idle limit, or older than the absolute limit, has expired', async () => {
    const { accountId } = await t.account();
    const idle = await signedIn(t, accountId, 'idle@example.com');
    const old = await signedIn(t, accountId, 'old@example.com');
    await t.sql`update dashboard_sessions set last_seen_at = now() - interval '12 hours 1 minute'
      where user_id = (select id from dashboard_users where email = 'idle@example.com')`;
    await t.sql`update dashboard_sessions set created_at = now() - interval '7 days 1 minute'
      where user_id = (select id from dashboard_users where email = 'old@example.com')`;
    for (const c of [idle, old]) {
      const res = await c.get('/dashboard');
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/sign-in');
    }
    expect(
      await t.sql`select 1 from dashboard_sessions s join dashboard_users u on u.id = s.user_id where u.email in ('idle@example.com', 'old@example.com')`,
    ).toHaveLength(0);
  });
});

describe('one-time set-password links', () => {
  it('work once: a second use, and a used link’s page, are refused', async () => {
    const { accountId } = await t.account();
    const r = await addUser(t.sql, accountId, 'once@example.com', 3600);
    if (!r.ok) throw new Error(r.problem);
    const c = new DashClient(t);
    const page = await c.get(`/dashboard/set-password?token=${r.token}`);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/<label for="password">New password/);
    expect(page.html).toMatch(/<label for="confirm">Repeat the password<\/label>/);
    const token = c.token;
    expect((await c.post('/dashboard/set-password', { token: r.token, password: 'short', confirm: 'short' })).status).toBe(400);
    expect((await c.post('/dashboard/set-password', { token: r.token, password: PASSWORD, confirm: PASSWORD + 'x' })).status).toBe(400);
    const done = await c.post('/dashboard/set-password', { token: r.token, password: PASSWORD, confirm: PASSWORD });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/dashboard/sign-in?password_set=1');
    expect((await c.get(`/dashboard/set-password?token=${r.token}`)).status).toBe(410);
    const reuse = await c.send('POST', '/dashboard/set-password', { _csrf: token, token: r.token, password: 'another password!', confirm: 'another password!' });
    expect(reuse.status).toBe(410);
    expect((await new DashClient(t).signIn('once@example.com', PASSWORD)).status).toBe(303);
    expect((await new DashClient(t).signIn('once@example.com', 'another password!')).status).toBe(401);
  });

  it('stop working once expired, and store only the hash of the token', async () => {
    const { accountId } = await t.account();
    const r = await addUser(t.sql, accountId, 'late@example.com', 3600);
    if (!r.ok) throw new Error(r.problem);
    const rows = await t.sql`select encode(token_hash, 'hex') as h from dashboard_password_tokens where user_id = ${r.user.id}`;
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(r.token);
    await t.sql`update dashboard_password_tokens set expires_at = now() - interval '1 second' where user_id = ${r.user.id}`;
    const res = await new DashClient(t).get(`/dashboard/set-password?token=${r.token}`);
    expect(res.status).toBe(410);
    expect(res.html).toContain('This link no longer works');
  });

  it('a signed-in owner invites another email of the same account with a role; the answer never holds the link; a second invitation is refused', async () => {
    const { accountId } = await t.account();
    const c = await signedIn(t, accountId, 'inviter@example.com');
    await c.get('/dashboard/team');
    const res = await c.post('/dashboard/team/invitations', { email: 'new@example.com', role: 'developer' });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/team?done=invited_logged');
    const [invited] = await t.sql`select account_id, password_hash, role from dashboard_users where email = 'new@example.com'`;
    expect(invited).toEqual({ account_id: accountId, password_hash: null, role: 'developer' });
    const page = await c.get(res.location!);
    expect(page.html).toContain('Invitation made.');
    expect(page.html).not.toContain('set-password?token=');
    await c.get('/dashboard/team');
    const twice = await c.post('/dashboard/team/invitations', { email: 'NEW@example.com', role: 'developer' });
    expect(twice.status).toBe(400);
    expect(twice.html).toContain('can already sign in to this account');
    expect(twice.html).not.toContain('set-password?token=');
    expect((await c.post('/dashboard/team/invitations', { email: 'not an email', role: 'developer' })).status).toBe(400);
  });
});

describe('https deployments', () => {
  const https = useTestServer({ env: { PUBLIC_BASE_URL: 'https://pay.example.com' } });
  it('mark the session cookie Secure', async () => {
    const { accountId } = await https.account();
    await createUser(https, accountId, 'secure@example.com');
    const res = await new DashClient(https).signIn('secure@example.com', PASSWORD);
    expect(res.status).toBe(303);
    expect(res.setCookies.find((s) => s.startsWith('dash_session='))).toMatch(/; Secure/);
  });
});
