import type { LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { AddressRefusedError, guardedLookup, setResolver } from '../../src/webhooks/dns.ts';
import { addressAllowed, localTargetAdvice, localTargetsOn, targetPolicy, urlProblem } from '../../src/webhooks/url.ts';

describe('WEBHOOK_TEST_LOCAL_TARGETS', () => {
  // Issue 21: unset, it is on only where the service is clearly on a developer's machine
  // (PUBLIC_BASE_URL on loopback, the default included, or the embedded services), whatever NODE_ENV says.
  const PUBLIC = 'https://pay.example.com';
  it.each([
    [{}, true],
    [{ NODE_ENV: 'production' }, true],
    [{ PUBLIC_BASE_URL: 'http://127.0.0.1:3000' }, true],
    [{ PUBLIC_BASE_URL: 'http://localhost.:3000' }, true],
    [{ PUBLIC_BASE_URL: 'http://[::1]:3000' }, true],
    [{ PUBLIC_BASE_URL: PUBLIC }, false],
    [{ PUBLIC_BASE_URL: PUBLIC, NODE_ENV: 'development' }, false],
    [{ PUBLIC_BASE_URL: 'http://192.168.1.20:3000' }, false],
    [{ PUBLIC_BASE_URL: PUBLIC, EMBEDDED_SERVICES: 'true' }, true],
    [{ PUBLIC_BASE_URL: PUBLIC, WEBHOOK_TEST_LOCAL_TARGETS: 'true' }, true],
    [{ PUBLIC_BASE_URL: PUBLIC, WEBHOOK_TEST_LOCAL_TARGETS: '1' }, true],
    [{ WEBHOOK_TEST_LOCAL_TARGETS: 'false' }, false],
    [{ WEBHOOK_TEST_LOCAL_TARGETS: '0' }, false],
    [{ PUBLIC_BASE_URL: PUBLIC, WEBHOOK_TEST_LOCAL_TARGETS: '' }, false],
  ])('when the environment is %j, then test-mode endpoints may be local: %s', (env, expected) => {
    expect(localTargetsOn(loadConfig(env))).toBe(expected);
  });

  it('when it is not a boolean, then the configuration is refused naming it', () => {
    expect(() => loadConfig({ WEBHOOK_TEST_LOCAL_TARGETS: 'yes' })).toThrow(/WEBHOOK_TEST_LOCAL_TARGETS/);
  });

  it('when the policy of an endpoint is asked, then a live endpoint is never local, and WEBHOOK_ALLOW_INSECURE_TARGETS lifts everything', () => {
    const on = { webhookAllowInsecureTargets: false, webhookTestLocalTargets: true, localSetup: false };
    const off = { webhookAllowInsecureTargets: false, webhookTestLocalTargets: false, localSetup: true };
    const insecure = { webhookAllowInsecureTargets: true, webhookTestLocalTargets: false, localSetup: false };
    expect([targetPolicy(on, false), targetPolicy(on, true)]).toEqual(['local', 'public']);
    expect([targetPolicy(off, false), targetPolicy(off, true)]).toEqual(['public', 'public']);
    expect([targetPolicy(insecure, false), targetPolicy(insecure, true)]).toEqual(['any', 'any']);
  });
});

describe("urlProblem under the 'local' policy (a test-mode endpoint with the setting on)", () => {
  it.each([
    'http://127.0.0.1:4000/webhooks',
    'http://localhost:4000/webhooks',
    'https://api.localhost./x',
    'http://[::1]:4000/x',
    'http://10.0.0.5/x',
    'http://192.168.1.20:8080/x',
    'http://[fd00::1]/x',
    'http://[::ffff:127.0.0.1]/x',
    'http://hooks.example.com/x',
    'https://hooks.example.com/x',
  ])('when the URL is %s, then it is accepted', (url) => {
    expect(urlProblem(url, 'local')).toBeNull();
  });

  it.each([
    ['the cloud metadata address', 'http://169.254.169.254/latest'],
    ['IPv6 link-local', 'http://[fe80::1]/x'],
    ['unspecified', 'http://0.0.0.0:4000/x'],
    ['multicast', 'http://224.0.0.1/x'],
    ['carrier-grade NAT', 'http://100.64.0.1/x'],
    ['reserved', 'http://240.0.0.1/x'],
  ])('when the URL is %s, then it is still refused', (_label, url) => {
    expect(urlProblem(url, 'local')).toMatch(/link-local, shared, multicast, unspecified or reserved/);
  });

  it('when the URL has credentials or another scheme, then it is refused as under every policy', () => {
    expect(urlProblem('http://u:p@127.0.0.1/x', 'local')).toMatch(/credentials/);
    expect(urlProblem('ftp://127.0.0.1/x', 'local')).toMatch(/http or https/);
  });

  it('when addresses are judged, then local allows loopback and private on top of public, and nothing else', () => {
    expect(['127.0.0.1', '::1', '10.1.2.3', '172.16.0.1', '192.168.0.1', 'fd12::1', '93.184.216.34'].every((a) => addressAllowed(a, 'local'))).toBe(true);
    expect(['169.254.169.254', 'fe80::1', '0.0.0.0', '::', '100.64.0.1', '255.255.255.255'].some((a) => addressAllowed(a, 'local'))).toBe(false);
    expect(['127.0.0.1', '10.1.2.3'].some((a) => addressAllowed(a, 'public'))).toBe(false);
  });
});

describe('guardedLookup under the local policy', () => {
  afterEach(() => setResolver(null));
  const lookup = (host: string) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => {
      guardedLookup('local')(host, {}, (err: NodeJS.ErrnoException | null, address: unknown) => resolve({ err, address }));
    });
  const resolving = (addresses: LookupAddress[]) => setResolver(async () => addresses);

  it('when a name resolves to a private address, then it is answered', async () => {
    resolving([{ address: '172.18.0.4', family: 4 }]);
    expect(await lookup('receiver')).toEqual({ err: null, address: '172.18.0.4' });
  });

  it('when a name resolves to the metadata address, then it is refused', async () => {
    resolving([{ address: '169.254.169.254', family: 4 }]);
    const { err } = await lookup('metadata.example.com');
    expect(err).toBeInstanceOf(AddressRefusedError);
    expect(err!.message).toMatch(/169\.254\.169\.254, which is not a public, loopback or private address/);
  });
});

describe('the advice given with a refused URL', () => {
  const on = { webhookAllowInsecureTargets: false, webhookTestLocalTargets: true, localSetup: false };
  const off = { webhookAllowInsecureTargets: false, webhookTestLocalTargets: null, localSetup: false };

  it('when a live endpoint is refused for being local or http, then the advice names listen and says live endpoints must be public, whatever the setting', () => {
    for (const c of [on, off]) {
      const advice = localTargetAdvice('http://127.0.0.1:4000/x', true, c)!;
      expect(advice).toContain('Live-mode endpoints must be public https URLs');
      expect(advice).toContain('payments-service listen');
      expect(advice).toContain('First webhook in five minutes with listen');
      expect(advice).toContain('WEBHOOK_TEST_LOCAL_TARGETS');
    }
  });

  it('when a test endpoint is refused with the setting off, then the advice names listen and the setting', () => {
    const advice = localTargetAdvice('https://localhost/x', false, off)!;
    expect(advice).toContain('payments-service listen');
    expect(advice).toContain('WEBHOOK_TEST_LOCAL_TARGETS');
  });

  it('when the URL is refused for another reason, then there is no advice', () => {
    expect(localTargetAdvice('https://u:p@hooks.example.com/x', false, off)).toBeNull();
    expect(localTargetAdvice('/webhooks', true, off)).toBeNull();
    expect(localTargetAdvice('http://169.254.169.254/x', false, on)).toBeNull();
  });
});
