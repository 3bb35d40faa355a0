import dns, { type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { addressAllowed, type TargetPolicy } from './url.ts';

/** Resolves a host name to all its addresses (dns.lookup with `all: true`). */
export type Resolver = (hostname: string, family: number) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname, family) => dns.promises.lookup(hostname, { all: true, family, verbatim: true });

let resolver: Resolver = systemResolver;

/** Replaces name resolution for webhook deliveries (tests map names without a DNS server); null restores it. */
export function setResolver(r: Resolver | null): void {
  resolver = r ?? systemResolver;
}

export class AddressRefusedError extends Error {
  readonly code = 'EADDRREFUSED';
}

/**
 * The `lookup` of the delivery agents: the address a connection is made to is the one checked
 * here, so a public-looking name that resolves to a private address is refused before any packet
 * is sent to it. Every address of the name must be allowed by `policy` (public; for a local
 * test-mode endpoint, loopback and private too): a name mixing both is not trusted.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options === 'number' ? options : (options?.family === 'IPv4' ? 4 : options?.family === 'IPv6' ? 6 : (options?.family ?? 0));
    const wantAll = typeof options === 'object' && options?.all === true;
    const answer = resolver(hostname, family).then((addresses) => {
      if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
      const refused = addresses.find((a) => !addressAllowed(a.address, policy));
      if (refused) {
        const allowed = policy === 'local' ? 'a public, loopback or private address' : 'a public address';
        throw new AddressRefusedError(`${hostname} resolves to ${refused.address}, which is not ${allowed}`);
      }
      return addresses;
    });
    answer.then(
      (addresses) => {
        if (wantAll) (callback as unknown as (err: null, a: LookupAddress[]) => void)(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
