import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may be sent (DESIGN 5): an absolute https URL with no credentials, whose host is
 * neither a local name nor an address outside the public unicast space. Checked when an endpoint is
 * saved (here, on the text of the URL, with no DNS) and again at connect time (dns.ts), where the
 * address actually connected to is known.
 */

/** True for an address a public webhook may be delivered to. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) ip = v6.toIPv4Address();
    // ::/96, the deprecated IPv4-compatible form, is in no ipaddr.js range but is no public target.
    else if (v6.parts.slice(0, 6).every((p) => p === 0)) return false;
  }
  // An allow-list: loopback, private, linkLocal, carrierGradeNat, multicast, unspecified, broadcast,
  // reserved, uniqueLocal, 6to4, teredo and the other special ranges are all something other than 'unicast'.
  return ip.range() === 'unicast';
}

const isLocalName = (host: string) => {
  const h = host.replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
};

/**
 * Why `raw` is not an acceptable endpoint URL, or null when it is. `allowInsecure`
 * (WEBHOOK_ALLOW_INSECURE_TARGETS) lifts the https and address rules, never the others.
 */
export function urlProblem(raw: string, allowInsecure: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL such as https://example.com/webhooks';
  }
  const schemes = allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return allowInsecure ? 'must be an http or https URL' : 'must be an https:// URL';
  if (url.username || url.password) return 'must not contain credentials (user:password@)';
  if (!url.hostname) return 'must name a host';
  if (allowInsecure) return null;
  // The URL parser has already normalised the host: decimal, octal and hex IPv4 forms become
  // dotted quads, and IPv6 literals are bracketed and compressed.
  const host = url.hostname.toLowerCase();
  if (isLocalName(host)) return 'must not point at localhost';
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (ipaddr.isValid(literal) && !isPublicAddress(literal)) {
    return 'must not point at a loopback, private, link-local, shared, multicast, unspecified or reserved address';
  }
  return null;
}
