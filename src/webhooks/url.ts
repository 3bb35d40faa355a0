import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may be sent (DESIGN 5): an absolute https URL with no credentials, whose host is
 * neither a local name nor an address outside the public unicast space. Checked when an endpoint is
 * saved (here, on the text of the URL, with no DNS) and again at connect time (dns.ts), where the
 * address actually connected to is known.
 */

/**
 * How far the rules are lifted for an endpoint (targetPolicy):
 * - `public`: the production rules above;
 * - `local`: besides public https URLs, `http://`, `localhost` names, loopback and private
 *   addresses (a test-mode endpoint when WEBHOOK_TEST_LOCAL_TARGETS is on); link-local (the cloud
 *   metadata address), multicast, unspecified and reserved addresses stay refused;
 * - `any`: no scheme or address rule beyond http(s) (WEBHOOK_ALLOW_INSECURE_TARGETS, tests).
 * The credentials rule holds in every case.
 */
export type TargetPolicy = 'public' | 'local' | 'any';

export interface TargetSettings {
  webhookAllowInsecureTargets: boolean;
  /** WEBHOOK_TEST_LOCAL_TARGETS as set, null when unset. */
  webhookTestLocalTargets: boolean | null;
  /** The service is clearly on a developer's machine (src/config.ts). */
  localSetup: boolean;
}

/**
 * Whether test-mode endpoints may be local: WEBHOOK_TEST_LOCAL_TARGETS as set, else only on a
 * developer's machine (PUBLIC_BASE_URL on loopback, or the embedded services), never merely
 * because NODE_ENV is unset (issue 21).
 */
export const localTargetsOn = (c: TargetSettings): boolean => c.webhookTestLocalTargets ?? c.localSetup;

/** The policy of an endpoint of `livemode`: a live endpoint is never local, whatever the settings say, unless everything is lifted for tests. */
export function targetPolicy(c: TargetSettings, livemode: boolean): TargetPolicy {
  if (c.webhookAllowInsecureTargets) return 'any';
  return !livemode && localTargetsOn(c) ? 'local' : 'public';
}

/** The address itself, IPv4-mapped IPv6 judged as its IPv4 address; null for the deprecated IPv4-compatible ::/96 (and ::). */
function parsed(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!ipaddr.isValid(address)) return null;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
    if (v6.range() === 'loopback') return v6; // ::1, inside ::/96 below
    // ::/96, the deprecated IPv4-compatible form, is in no ipaddr.js range but is no target at all.
    if (v6.parts.slice(0, 6).every((p) => p === 0)) return null;
  }
  return ip;
}

/** True for an address a public webhook may be delivered to. */
export function isPublicAddress(address: string): boolean {
  // An allow-list: loopback, private, linkLocal, carrierGradeNat, multicast, unspecified, broadcast,
  // reserved, uniqueLocal, 6to4, teredo and the other special ranges are all something other than 'unicast'.
  return parsed(address)?.range() === 'unicast';
}

/** Loopback and private addresses (10/8, 172.16/12, 192.168/16, fc00::/7): this machine and its network. */
export function isLocalAddress(address: string): boolean {
  const range = parsed(address)?.range();
  return range === 'loopback' || range === 'private' || range === 'uniqueLocal';
}

/** Whether a delivery may connect to `address` under `policy`. */
export function addressAllowed(address: string, policy: TargetPolicy): boolean {
  return policy === 'any' || isPublicAddress(address) || (policy === 'local' && isLocalAddress(address));
}

const isLocalName = (host: string) => {
  const h = host.replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};

/**
 * Why `raw` is not an acceptable endpoint URL under `policy`, or null when it is. Lifting the
 * rules (`local`, `any`) never lifts the credentials rule.
 */
export function urlProblem(raw: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL such as https://example.com/webhooks';
  }
  const schemes = policy === 'public' ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(url.protocol)) return policy === 'public' ? 'must be an https:// URL' : 'must be an http or https URL';
  if (url.username || url.password) return 'must not contain credentials (user:password@)';
  if (!url.hostname) return 'must name a host';
  if (policy === 'any') return null;
  // The URL parser has already normalised the host: decimal, octal and hex IPv4 forms become
  // dotted quads, and IPv6 literals are bracketed and compressed.
  const host = url.hostname.toLowerCase();
  if (isLocalName(host)) return policy === 'local' ? null : 'must not point at localhost';
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (ipaddr.isValid(literal) && !addressAllowed(literal, policy)) {
    return policy === 'local'
      ? 'must not point at a link-local, shared, multicast, unspecified or reserved address (loopback and private addresses are allowed)'
      : 'must not point at a loopback, private, link-local, shared, multicast, unspecified or reserved address';
  }
  return null;
}

/**
 * What to do about a URL refused for its scheme or address (not for being malformed): receive on
 * this machine through `payments-service listen`, or, in test mode, with WEBHOOK_TEST_LOCAL_TARGETS.
 * Null for any other problem.
 */
export function localTargetAdvice(raw: string, livemode: boolean, c: TargetSettings): string | null {
  if (urlProblem(raw, 'any') !== null) return null; // malformed or with credentials: no setting helps
  const listen = 'run `payments-service listen --forward-to <your local URL>` with a test key (README, "First webhook in five minutes with listen")';
  if (livemode) {
    return `Live-mode endpoints must be public https URLs, whatever the settings. To receive events on your own machine, ${listen}, or create the endpoint with a test key on a service where WEBHOOK_TEST_LOCAL_TARGETS is on.`;
  }
  if (!localTargetsOn(c)) {
    return `To receive test events on your own machine, ${listen}, or turn WEBHOOK_TEST_LOCAL_TARGETS on for this service (on by default only where PUBLIC_BASE_URL is a loopback address or the service runs on its embedded Postgres and Redis) so that test-mode endpoints may use http, localhost, loopback and private addresses.`;
  }
  return null;
}
