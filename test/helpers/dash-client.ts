import { randomBytes } from 'node:crypto';
import { addUser } from '../../src/dashboard/service.ts';
import { FormClient, type Answer } from './form-client.ts';
import type { TestServer } from './server.ts';

export type { Answer } from './form-client.ts';

/** A new idempotency key, as a dashboard form carries one. */
export const formKey = (): string => randomBytes(16).toString('base64url');

/**
 * A browser without a browser: a cookie jar, the last page's CSRF token and mode, urlencoded
 * forms. `post` sends what a form of the last page sends: its CSRF token, the mode it was opened
 * in and a fresh idempotency key (each overridable).
 */
export class DashClient extends FormClient {
  mode = 'test';

  protected override onPage(html: string): void {
    const mode = /name="form_mode" value="([^"]+)"/.exec(html);
    if (mode) this.mode = mode[1]!;
  }

  post(path: string, form: Record<string, string>) {
    return this.send('POST', path, { _csrf: this.token, form_mode: this.mode, idempotency_key: formKey(), ...form });
  }

  async signIn(email: string, password: string): Promise<Answer> {
    await this.get('/dashboard/sign-in');
    return this.post('/dashboard/sign-in', { email, password });
  }
}

export const PASSWORD = 'a long test password';

/** A user of the account with a password set through the one-time link, as a merchant would. */
export async function createUser(t: TestServer, accountId: string, email: string, password = PASSWORD): Promise<void> {
  const r = await addUser(t.sql, accountId, email, 3600);
  if (!r.ok) throw new Error(r.problem);
  const c = new DashClient(t);
  const page = await c.get(`/dashboard/set-password?token=${r.token}`);
  if (page.status !== 200) throw new Error(`set-password page: ${page.status}`);
  const done = await c.post('/dashboard/set-password', { token: r.token, password, confirm: password });
  if (done.status !== 303) throw new Error(`set-password: ${done.status} ${done.html}`);
}

/** A client signed in as a new user of the account. */
export async function signedIn(t: TestServer, accountId: string, email: string): Promise<DashClient> {
  await createUser(t, accountId, email);
  const c = new DashClient(t);
  const res = await c.signIn(email, PASSWORD);
  if (res.status !== 303) throw new Error(`sign-in: ${res.status}`);
  await c.get('/dashboard');
  return c;
}

/**
 * Signs a Chromium page in as a user of the account (created with PASSWORD if new), the way a
 * merchant does: the sign-in form, then Home.
 */
export async function signInBrowser(page: import('playwright-core').Page, t: TestServer, accountId: string, email: string): Promise<void> {
  const [known] = await t.sql`select 1 from dashboard_users where account_id = ${accountId} and lower(email) = lower(${email})`;
  if (!known) await createUser(t, accountId, email);
  await page.goto(`${t.url}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${t.url}/dashboard`);
}

/** Collects what the page's CSP refused: a dashboard page must refuse nothing of its own. */
export function cspViolations(page: import('playwright-core').Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

/**
 * Where the dashboard's browser tests save their screenshots, for people to look at:
 * test/artifacts/dashboard (gitignored), or DASH_SHOTS_DIR.
 */
export const SHOTS = process.env.DASH_SHOTS_DIR ?? new URL('../artifacts/dashboard', import.meta.url).pathname;
