import ipaddr from 'ipaddr.js';

/**
 * Whether a URL's host names this machine (issue 21): `localhost` in any case, with or without
 * the trailing dot, and its subdomains (RFC 6761), a loopback address (127.0.0.0/8, ::1, an
 * IPv4-mapped 127.x), or the unspecified address (0.0.0.0, ::), which a connection takes to this
 * machine too. `hostname` is as the WHATWG URL parser gives it, which has already turned
 * `2130706433`, `0x7f000001`, `0177.0.0.1` and `127.1` into `127.0.0.1`, and bracketed IPv6.
 * A name that resolves to loopback is only known at connect time (src/webhooks/dns.ts).
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const literal = h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
  if (!ipaddr.isValid(literal)) return false;
  const ip = ipaddr.parse(literal);
  const range = ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address().range() : ip.range();
  return range === 'loopback' || range === 'unspecified';
}

/** Whether an absolute URL's host names this machine (isLoopbackHost); false for what is not a URL. */
export function isLoopbackUrl(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
}
