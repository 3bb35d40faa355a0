import { describe, expect, it } from 'vitest';
import { isLoopbackHost, isLoopbackUrl } from '../../src/lib/loopback.ts';

// Issue 21, point 4: every spelling of this machine, as the URL parser hands it over.
describe('isLoopbackUrl: this machine', () => {
  it.each([
    'http://localhost:3000',
    'http://LOCALHOST/',
    'http://localhost./',
    'https://pay.localhost/',
    'http://127.0.0.1:3000',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://127.255.255.254/',
    'http://[::1]:3000',
    'http://[0:0:0:0:0:0:0:1]/',
    'http://[::ffff:127.0.0.1]/',
    // The unspecified address: a connection to it reaches this machine.
    'http://0.0.0.0:3000/',
    'http://[::]/',
  ])('when the URL is %s, then it is this machine', (url) => {
    expect(isLoopbackUrl(url)).toBe(true);
  });

  it.each(['https://pay.example.com', 'http://10.0.0.5/', 'http://192.168.1.20:3000', 'http://localhost.example.com/', 'http://127.0.0.1.nip.io/', 'not a url'])(
    'when the URL is %s, then it is not',
    (url) => {
      expect(isLoopbackUrl(url)).toBe(false);
    },
  );

  it('when a bare host is given, then the same rules hold', () => {
    expect([isLoopbackHost('LocalHost.'), isLoopbackHost('[::1]'), isLoopbackHost('127.0.0.9'), isLoopbackHost('example.com')]).toEqual([true, true, true, false]);
  });
});
