import type { LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { AddressRefusedError, guardedLookup, setResolver } from '../../src/webhooks/dns.ts';
import { isPublicAddress, urlProblem } from '../../src/webhooks/url.ts';

describe('urlProblem (endpoint URL when saved)', () => {
  it.each([
    'https://hooks.example.com/x',
    'https://93.184.216.34/x',
    'https://[2606:2800:220:1:248:1893:25c8:1946]:8443/x',
    'https://example.com./x',
  ])('when the URL is %s, then it is accepted', (url) => {
    expect(urlProblem(url, 'public')).toBeNull();
  });

  it.each([
    ['not a URL', '/webhooks', /absolute URL/],
    ['http', 'http://hooks.example.com/x', /https:\/\//],
    ['ftp', 'ftp://hooks.example.com/x', /https:\/\//],
    ['credentials', 'https://user:pw@hooks.example.com/x', /credentials/],
    ['localhost', 'https://localhost/x', /localhost/],
    ['a .localhost name', 'https://api.localhost./x', /localhost/],
    ['loopback', 'https://127.0.0.1/x', /loopback, private/],
    ['loopback in decimal', 'https://2130706433/x', /loopback, private/],
    ['loopback in hex', 'https://0x7f.1/x', /loopback, private/],
    ['a private address', 'https://10.1.2.3/x', /loopback, private/],
    ['the metadata address', 'https://169.254.169.254/latest', /loopback, private/],
    ['IPv6 loopback', 'https://[::1]/x', /loopback, private/],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/x', /loopback, private/],
    ['unique-local IPv6', 'https://[fd00::1]/x', /loopback, private/],
  ])('when the URL is %s, then it is refused with a reason', (_label, url, reason) => {
    expect(urlProblem(url, 'public')).toMatch(reason);
  });

  it('when insecure targets are allowed, then http and private addresses pass but credentials and other schemes do not', () => {
    expect(urlProblem('http://127.0.0.1:3000/x', 'any')).toBeNull();
    expect(urlProblem('http://localhost/x', 'any')).toBeNull();
    expect(urlProblem('http://u:p@127.0.0.1/x', 'any')).toMatch(/credentials/);
    expect(urlProblem('ftp://127.0.0.1/x', 'any')).toMatch(/http or https/);
  });
});

describe('isPublicAddress', () => {
  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34'])('when the address is %s, then it is public', (a) => {
    expect(isPublicAddress(a)).toBe(true);
  });

  it.each(['127.0.0.1', '10.0.0.5', '172.16.0.1', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '255.255.255.255', '224.0.0.1', '::1', '::', '::127.0.0.1', '::ffff:10.0.0.1', 'fe80::1', 'fd12::1', 'ff02::1', 'not an ip'])(
    'when the address is %s, then it is not public',
    (a) => {
      expect(isPublicAddress(a)).toBe(false);
    },
  );
});

describe('guardedLookup (address check at connect time)', () => {
  afterEach(() => setResolver(null));

  const lookup = (check: boolean, host: string, all = false) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => {
      guardedLookup(check ? 'public' : 'any')(host, { all }, (err: NodeJS.ErrnoException | null, address: unknown) => resolve({ err, address }));
    });
  const resolving = (addresses: LookupAddress[]) => setResolver(async () => addresses);

  it('when every address of the name is public, then the first is answered (or all when asked)', async () => {
    resolving([{ address: '93.184.216.34', family: 4 }, { address: '93.184.216.35', family: 4 }]);
    expect(await lookup(true, 'hooks.example.com')).toEqual({ err: null, address: '93.184.216.34' });
    expect((await lookup(true, 'hooks.example.com', true)).address).toHaveLength(2);
  });

  it('when any address of the name is private, then the lookup fails with AddressRefusedError naming it', async () => {
    resolving([{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }]);
    const { err } = await lookup(true, 'hooks.example.com');
    expect(err).toBeInstanceOf(AddressRefusedError);
    expect(err!.message).toMatch(/resolves to 10\.0\.0\.5, which is not a public address/);
  });

  it('when the check is off (insecure targets allowed), then a private address is answered', async () => {
    resolving([{ address: '127.0.0.1', family: 4 }]);
    expect(await lookup(false, 'hooks.example.com')).toEqual({ err: null, address: '127.0.0.1' });
  });

  it('when the name has no address, then the lookup fails with ENOTFOUND', async () => {
    resolving([]);
    expect((await lookup(true, 'nothing.example.com')).err).toMatchObject({ code: 'ENOTFOUND' });
  });
});
