import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

const account = (key: string) => t.request('GET', '/v1/account', { key });
const post = (key: string, body: unknown) => t.request('POST', '/v1/account', { key, body });
const patch = (key: string, body: unknown) => t.request('PATCH', '/v1/account', { key, body });

describe("the account's branding settings (support_email, brand_color, logo_url)", () => {
  it('when a new account is read, then the three settings are null; once set, both modes answer them, normalised; null clears each one', async () => {
    const a = await t.account();
    expect((await account(a.test)).body).toMatchObject({ support_email: null, brand_color: null, logo_url: null });
    const set = await patch(a.live, { support_email: ' Help@Tea.Example ', brand_color: '#0A7CFF', logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: a.accountId, support_email: 'help@tea.example', brand_color: '#0a7cff', logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    expect((await account(a.live)).body).toMatchObject({ livemode: true, support_email: 'help@tea.example', brand_color: '#0a7cff', logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    // A partial update leaves the other fields as they were; POST is the same handler.
    expect((await post(a.live, { brand_color: null })).body).toMatchObject({ support_email: 'help@tea.example', brand_color: null, logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    await patch(a.live, { support_email: null, logo_url: null });
    expect((await account(a.test)).body).toMatchObject({ support_email: null, brand_color: null, logo_url: null });
    expect(await t.sql`select support_email, brand_color, logo_url from accounts where id = ${a.accountId}`).toEqual([{ support_email: null, brand_color: null, logo_url: null }]);
  });

  it("when one account sets its branding, then another account's stays null", async () => {
    const a = await t.account();
    const b = await t.account();
    await patch(a.live, { support_email: 'help@a.example', brand_color: '#112233', logo_url: 'https://a.example/l.png' });
    expect((await account(b.test)).body).toMatchObject({ support_email: null, brand_color: null, logo_url: null });
  });

  it('when a setting is invalid, then 400 names that field and nothing changes', async () => {
    const a = await t.account();
    const good = { support_email: 'help@tea.example', brand_color: '#123456', logo_url: 'https://tea.example/logo.svg' };
    await patch(a.live, good);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ support_email: 'not an email' }, 'support_email'],
      [{ support_email: '' }, 'support_email'],
      [{ support_email: `${'x'.repeat(250)}@a.example` }, 'support_email'],
      [{ support_email: 'a@b.example\r\nBcc: victim@example.com' }, 'support_email'],
      [{ support_email: 42 }, 'support_email'],
      [{ brand_color: 'red' }, 'brand_color'],
      [{ brand_color: '#fff' }, 'brand_color'],
      [{ brand_color: '#12345g' }, 'brand_color'],
      [{ brand_color: '#123456;}body{display:none' }, 'brand_color'],
      [{ brand_color: ' #123456' }, 'brand_color'],
      [{ logo_url: 'http://tea.example/logo.png' }, 'logo_url'],
      [{ logo_url: 'data:image/png;base64,AAAA' }, 'logo_url'],
      [{ logo_url: 'javascript:alert(1)' }, 'logo_url'],
      [{ logo_url: 'tea.example/logo.png' }, 'logo_url'],
      [{ logo_url: 'https://user:pw@tea.example/logo.png' }, 'logo_url'],
      [{ logo_url: 'https://a;b.example/logo.png' }, 'logo_url'],
      [{ logo_url: 'https://tea.example/a"b.png' }, 'logo_url'],
      [{ logo_url: `https://tea.example/${'x'.repeat(1981)}` }, 'logo_url'],
      [{ logo_url: 7 }, 'logo_url'],
      [{ brand_colour: '#123456' }, 'brand_colour'],
    ];
    for (const [body, param] of cases) {
      for (const send of [post, patch]) {
        const res = await send(a.live, { business_name: 'Changed', ...body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.param, JSON.stringify(body)).toBe(param);
        expect(res.body.error.code).toMatch(/^parameter_(invalid|unknown)$/);
      }
    }
    expect((await account(a.test)).body).toMatchObject({ business_name: null, ...good });
    // The longest accepted logo URL: 2000 characters.
    const longest = `https://tea.example/${'x'.repeat(1980)}`;
    expect(longest).toHaveLength(2000);
    expect((await patch(a.live, { logo_url: longest })).body.logo_url).toBe(longest);
  });
});

describe('a test key and the account settings (issue 21, point 2)', () => {
  const LIVE = { business_name: 'Harbour Tea Rooms', support_email: 'help@harbour.example', brand_color: '#0a7c55', logo_url: 'https://cdn.harbour.example/logo.png' };

  it('when a (leaked) test key sets any account setting, by PATCH or POST, valid or not, then 403 permission_error says a live key is needed, and what live customers see is untouched', async () => {
    const a = await t.account();
    expect((await patch(a.live, LIVE)).status).toBe(200);
    const attempts: Array<Record<string, unknown>> = [
      { business_name: 'Evil Corp' },
      { support_email: 'replies@attacker.example' },
      { brand_color: '#ff0000' },
      { logo_url: 'https://attacker.example/logo.png' },
      { business_name: null, support_email: null, brand_color: null, logo_url: null },
      { business_name: '' },
      { unknown_field: 1 },
      {},
    ];
    for (const body of attempts) {
      for (const send of [patch, post]) {
        const res = await send(a.test, body);
        expect(res.status, JSON.stringify(body)).toBe(403);
        expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'forbidden' });
        expect(res.body.error.message).toContain('need a live key (sk_live_…) or the dashboard in live mode');
      }
    }
    expect(await t.sql`select business_name, support_email, brand_color, logo_url from accounts where id = ${a.accountId}`).toEqual([LIVE]);
    expect((await account(a.live)).body).toMatchObject(LIVE);
    // The test key still reads them.
    expect((await account(a.test)).body).toMatchObject({ livemode: false, ...LIVE });
    // And the live pages show them: a live payment link's page (live payments are off here) is in the live branding.
    const link = (await t.request('POST', '/v1/payment-links', { key: a.live, body: { amount: 1500, currency: 'usd', name: 'Tea' } })).body;
    const page = await fetch(link.url);
    expect(await page.text()).toContain('Harbour Tea Rooms');
  });
});
