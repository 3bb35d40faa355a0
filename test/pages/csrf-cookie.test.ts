import { stringifySetCookie } from 'cookie';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { createLink } from '../helpers/factories.ts';

// src/pages/security.ts writes the CSRF cookie from attributes made once (no options parsed per
// page): the header must be exactly what the cookie package writes for the same nonce, over plain
// HTTP and behind a proxy that says https (then with Secure).
const t = useTestServer(() => ({ env: { TRUST_PROXY: 'loopback' } }));
let key: string;
beforeAll(async () => {
  key = (await t.account()).test;
});

const expected = (nonce: string, secure: boolean) => stringifySetCookie('hp_csrf', nonce, { path: '/', httpOnly: true, sameSite: 'lax', maxAge: 86400, secure });

describe('the CSRF cookie of a first visit', () => {
  it.each([
    ['plain HTTP', {}, false],
    ['https at the proxy', { 'x-forwarded-proto': 'https' }, true],
  ] as const)('over %s, then Set-Cookie is the cookie package’s header for its nonce', async (_name, headers, secure) => {
    const link = await createLink(t, key, {});
    for (let i = 0; i < 3; i++) {
      const res = await fetch(link.url, { headers });
      expect(res.status).toBe(200);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('hp_csrf='));
      const nonce = /^hp_csrf=([A-Za-z0-9_-]{22});/.exec(cookie ?? '')?.[1];
      expect(nonce).toBeDefined();
      expect(cookie).toBe(expected(nonce!, secure));
    }
  });

  it('when the browser sends its cookie back, then no new one is set', async () => {
    const link = await createLink(t, key, {});
    const first = await fetch(link.url);
    const cookie = first.headers.getSetCookie().find((c) => c.startsWith('hp_csrf='))!.split(';')[0]!;
    const again = await fetch(link.url, { headers: { cookie } });
    expect(again.status).toBe(200);
    expect(again.headers.getSetCookie().filter((c) => c.startsWith('hp_csrf='))).toEqual([]);
  });
});
