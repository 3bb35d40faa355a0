import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();

describe('account', () => {
  it('when a test key calls /v1/account, then it answers the account in test mode', async () => {
    const a = await t.account();
    const res = await t.request('GET', '/v1/account', { key: a.test });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: a.accountId, object: 'account', livemode: false, charges_enabled: true, business_name: null, support_email: null, brand_color: null, logo_url: null });
    expect(res.headers.get('request-id')).toMatch(/^req_/);
  });
});
