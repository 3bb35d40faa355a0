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
    const set = await patch(a.test, { support_email: ' Help@Tea.Example ', brand_color: '#0A7CFF', logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: a.accountId, support_email: 'help@tea.example', brand_color: '#0a7cff', logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    expect((await account(a.live)).body).toMatchObject({ livemode: true, support_email: 'help@tea.example', brand_color: '#0a7cff', logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    // A partial update leaves the other fields as they were; POST is the same handler.
    expect((await post(a.live, { brand_color: null })).body).toMatchObject({ support_email: 'help@tea.example', brand_color: null, logo_url: 'https://cdn.tea.example/logo.png?v=2' });
    await patch(a.test, { support_email: null, logo_url: null });
    expect((await account(a.test)).body).toMatchObject({ support_email: null, brand_color: null, logo_url: null });
    expect(await t.sql`select support_email, brand_color, logo_url from accounts where id = ${a.accountId}`).toEqual([{ support_email: null, brand_color: null, logo_url: null }]);
  });

  it("when one account sets its branding, then another account's stays null", async () => {
    const a = await t.account();
    const b = await t.account();
    await patch(a.test, { support_email: 'help@a.example', brand_color: '#112233', logo_url: 'https://a.example/l.png' });
    expect((await account(b.test)).body).toMatchObject({ support_email: null, brand_color: null, logo_url: null });
  });

  it('when a setting is invalid, then 400 names that field and nothing changes', async () => {
    const a = await t.account();
    const good = { support_email: 'help@tea.example', brand_color: '#123456', logo_url: 'https://tea.example/logo.svg' };
    await patch(a.test, good);
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
        const res = await send(a.test, { business_name: 'Changed', ...body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error.param, JSON.stringify(body)).toBe(param);
        expect(res.body.error.code).toMatch(/^parameter_(invalid|unknown)$/);
      }
    }
    expect((await account(a.test)).body).toMatchObject({ business_name: null, ...good });
    // The longest accepted logo URL: 2000 characters.
    const longest = `https://tea.example/${'x'.repeat(1980)}`;
    expect(longest).toHaveLength(2000);
    expect((await patch(a.test, { logo_url: longest })).body.logo_url).toBe(longest);
  });
});
