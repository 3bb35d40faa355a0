import { fallbackWarning, HourlyLimit, type Throttled } from '../pages/index.ts';
import type { Services } from '../services.ts';

/**
 * Sign-in limits of the dashboard, counted as the hosted pages count (src/pages/rate-limit.ts
 * `HourlyLimit`): in Redis, shared by every web process; in memory per process while Redis is down
 * or slow, so that the limits hold rather than lapse. None can be turned against a user (issue 21):
 *
 * - per client address, every attempt (DASHBOARD_SIGN_IN_PER_CLIENT_PER_HOUR): a client trying
 *   many emails is refused, and only that client;
 * - per email and client address, wrong passwords (DASHBOARD_SIGN_IN_PER_EMAIL_PER_HOUR): a client
 *   guessing one user's password is refused for that email; the user, from their own address, is not;
 * - per email, wrong passwords from every address (DASHBOARD_SIGN_IN_SLOWDOWN_PER_EMAIL_PER_HOUR):
 *   past it each attempt for the email waits first, 1 s doubling with each further failure up to
 *   MAX_DELAY_MS. Guesses from many addresses are slowed; the user still gets in.
 */
export interface SignInThrottle {
  /** Before the password is checked: a refusal (429), or how long to wait first (0: none). */
  before(client: string, email: string): Promise<{ refused: Throttled } | { delayMs: number }>;
  /** A wrong password: counted for the email and client, and for the email. */
  failed(client: string, email: string): Promise<void>;
  /** The right one: that client's failures for the email are forgotten. */
  succeeded(client: string, email: string): Promise<void>;
}

/** The longest wait before a sign-in of an email under attack. */
export const MAX_DELAY_MS = 10_000;

/** How long an attempt for an email waits when it has had `failures` wrong passwords this hour and the slowdown starts at `after`. */
export function slowdownMs(failures: number, after: number): number {
  if (after <= 0 || failures < after) return 0;
  return Math.min(MAX_DELAY_MS, 1000 * 2 ** Math.min(failures - after, 16));
}

/**
 * `step`: 'password' counts the sign-in form; 'second-factor' counts the codes and passkeys of the
 * second step apart (issue 25), with the same limits, its "email" being the user's id.
 */
export function signInThrottle(s: Services, step: 'password' | 'second-factor' = 'password'): SignInThrottle {
  const fellBack = fallbackWarning(s.log.child({ component: 'dashboard-rate-limit' }), 'dashboard sign-in limits counted in memory: Redis is unavailable');
  const cfg = s.config.dashboard;
  // A limit set to 0 is off.
  const prefix = step === 'password' ? 'dash-signin' : 'dash-2fa';
  const limit = (name: string, points: number) => (points > 0 ? new HourlyLimit(s, `${prefix}-${name}`, points, fellBack) : null);
  const perClient = limit('client', cfg.signInPerClientPerHour);
  const perEmailAndClient = limit('email-client', cfg.signInPerEmailPerHour);
  // Only peeked at and added to, never taken from: it slows, it never refuses.
  const perEmail = limit('email-failures', cfg.signInSlowdownPerEmailPerHour);
  const pair = (client: string, email: string) => `${email.toLowerCase()}|${client}`;
  return {
    async before(client, email) {
      const refused = (await perClient?.take(client)) ?? (await perEmailAndClient?.peek(pair(client, email)))?.over ?? null;
      if (refused) return { refused };
      const failures = (await perEmail?.peek(email.toLowerCase()))?.used ?? 0;
      return { delayMs: slowdownMs(failures, cfg.signInSlowdownPerEmailPerHour) };
    },
    async failed(client, email) {
      await Promise.all([perEmailAndClient?.add(pair(client, email)), perEmail?.add(email.toLowerCase())]);
    },
    async succeeded(client, email) {
      await perEmailAndClient?.reset(pair(client, email));
    },
  };
}
