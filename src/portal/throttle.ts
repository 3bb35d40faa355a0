import { fallbackWarning, HourlyLimit, type Throttled } from '../pages/index.ts';
import type { Services } from '../services.ts';

/**
 * Limits on portal sign-in links, counted as the hosted pages count (src/pages/rate-limit.ts
 * `HourlyLimit`): in Redis, shared by every web process; in memory per process while Redis is down
 * or slow, so that the limits hold rather than lapse.
 *
 * - Per client address: requests; past the limit, a 429 page (only that client is held back).
 * - Per email address, whatever the account: emails actually sent. Past the limit the request is
 *   answered as every other ("Check your email") and nothing is sent, so a stranger can neither
 *   flood a customer's inbox nor make the page answer differently for that customer (issue 21).
 */
export interface SignInThrottle {
  /** Counts one request of a client; how long to wait when it is over its limit, else null. */
  take(client: string): Promise<Throttled | null>;
  /** Counts one sign-in email to `email`; false when the address has had its emails for the hour (send nothing). */
  mayEmail(email: string): Promise<boolean>;
}

export function portalSignInThrottle(s: Services): SignInThrottle {
  const fellBack = fallbackWarning(s.log.child({ component: 'portal-rate-limit' }), 'portal sign-in limits counted in memory: Redis is unavailable');
  // A limit set to 0 is off.
  const limit = (name: string, points: number) => (points > 0 ? new HourlyLimit(s, name, points, fellBack) : null);
  const perClient = limit('portal-signin-client', s.config.portal.signInPerClientPerHour);
  const perEmail = limit('portal-signin-email', s.config.portal.signInPerEmailPerHour);
  return {
    take: async (client) => (await perClient?.take(client)) ?? null,
    mayEmail: async (email) => ((await perEmail?.take(email.trim().toLowerCase())) ?? null) === null,
  };
}
