import { fallbackWarning, HourlyLimit, takeAll } from '../pages/index.ts';
import type { Services } from '../services.ts';

/**
 * Sign-in limits of the dashboard, per client address and per email, counted as the hosted pages
 * count (src/pages/rate-limit.ts `HourlyLimit`): in Redis, shared by every web process; in memory
 * per process while Redis is down or slow, so that the limits hold rather than lapse.
 */
export interface SignInThrottle {
  /** Counts one attempt; the seconds until the next is allowed when it is over a limit, else null. */
  take(client: string, email: string): Promise<number | null>;
}

export function signInThrottle(s: Services): SignInThrottle {
  const fellBack = fallbackWarning(s.log.child({ component: 'dashboard-rate-limit' }), 'dashboard sign-in limits counted in memory: Redis is unavailable');
  // A limit set to 0 is off.
  const limit = (name: string, points: number) => (points > 0 ? new HourlyLimit(s, name, points, fellBack) : null);
  const perClient = limit('dash-signin-client', s.config.dashboard.signInPerClientPerHour);
  const perEmail = limit('dash-signin-email', s.config.dashboard.signInPerEmailPerHour);
  return {
    async take(client, email) {
      const refused = await takeAll([perClient?.take(client) ?? null, perEmail?.take(email.toLowerCase()) ?? null]);
      return refused ? refused.retryAfterSeconds : null;
    },
  };
}
