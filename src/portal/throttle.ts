import { fallbackWarning, HourlyLimit, takeAll, type Throttled } from '../pages/index.ts';
import type { Services } from '../services.ts';

/**
 * Limits on asking for a portal sign-in link, per client address and per email (whatever the
 * account: they protect the recipient's inbox as much as the service), counted as the hosted pages
 * count (src/pages/rate-limit.ts `HourlyLimit`): in Redis, shared by every web process; in memory
 * per process while Redis is down or slow, so that the limits hold rather than lapse.
 */
export interface SignInThrottle {
  /** Counts one request; how long to wait when it is over a limit, else null. */
  take(client: string, email: string): Promise<Throttled | null>;
}

export function portalSignInThrottle(s: Services): SignInThrottle {
  const fellBack = fallbackWarning(s.log.child({ component: 'portal-rate-limit' }), 'portal sign-in limits counted in memory: Redis is unavailable');
  // A limit set to 0 is off.
  const limit = (name: string, points: number) => (points > 0 ? new HourlyLimit(s, name, points, fellBack) : null);
  const perClient = limit('portal-signin-client', s.config.portal.signInPerClientPerHour);
  const perEmail = limit('portal-signin-email', s.config.portal.signInPerEmailPerHour);
  return {
    take: (client, email) => takeAll([perClient?.take(client) ?? null, perEmail?.take(email.trim().toLowerCase()) ?? null]),
  };
}
