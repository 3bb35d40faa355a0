import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer({ env: { ADMIN_USER: 'ops', ADMIN_PASSWORD: 'board-sécret' } });
const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

describe('the Bull Board guard', () => {
  it('when no credentials are sent, then 401 api_key_missing in the API error shape with a Basic challenge in UTF-8', async () => {
    const res = await t.request('GET', '/admin/queues');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="Bull Board", charset="UTF-8"');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      error: { type: 'authentication_error', code: 'api_key_missing', message: 'Bull Board needs the admin user name and password (HTTP basic auth).' },
    });
  });

  it('when the user name or the password is wrong, then 401 api_key_invalid, and nothing of the board is served', async () => {
    for (const headers of [basic('ops', 'wrong'), basic('wrong', 'board-sécret'), basic('ops', 'board-sécre'), basic('', '')]) {
      const res = await t.request('GET', '/admin/queues/api/queues', { headers });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('api_key_invalid');
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    }
  });

  it('when the right user name and a non-ASCII password are sent, then the board answers', async () => {
    const res = await t.request('GET', '/admin/queues/api/queues', { headers: basic('ops', 'board-sécret') });
    expect(res.status).toBe(200);
    expect(res.body.queues.map((q: { name: string }) => q.name)).toContain('link-counters');
  });

  it('when the board page is served, then it links no asset outside the service (its fonts fall back), and its own assets load', async () => {
    const headers = basic('ops', 'board-sécret');
    const page = await t.request('GET', '/admin/queues', { headers });
    expect(page.status).toBe(200);
    const html = String(page.body);
    expect(html).toContain('<div id="root">');
    expect(html).not.toMatch(/(href|src)="https?:\/\//);
    // The page's scripts and stylesheet, by the names the installed version gives them.
    const assets = [...html.matchAll(/(?:href|src)="(static\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const a of assets) expect((await t.request('GET', `/admin/queues/${a}`, { headers })).status, a).toBe(200);
  });
});
