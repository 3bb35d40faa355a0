import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';
import { formKey, signedIn, type DashClient } from './client.ts';
import { createEndpoint } from '../helpers/factories.ts';

// Issue 26, points 2 and 6 on the endpoint form: the rate limit and ordered mode, as the API sets them.
const t = useTestServer({ env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });
let a: { accountId: string; test: string; live: string };
let c: DashClient;

beforeAll(async () => {
  a = await t.account();
  c = await signedIn(t, a.accountId, 'owner@delivery-options.example');
});

function post(path: string, pairs: Array<[string, string]>) {
  const form = [['_csrf', c.token], ['form_mode', c.mode], ['idempotency_key', formKey()], ...pairs];
  return c.send('POST', path, form as unknown as Record<string, string>);
}

const options = async (id: string) =>
  (await t.sql<{ rate_limit: number | null; ordered: boolean }[]>`select rate_limit, ordered from webhook_endpoints where id = ${id}`)[0];

describe('rate limit and ordered mode on the endpoint form', () => {
  it('when an endpoint is added with a rate limit and ordered, then both are stored, shown on its page, and editable back to none', async () => {
    const res = await post('/dashboard/webhooks', [['url', 'http://127.0.0.1:9/options'], ['enabled_events', '*'], ['rate_limit', '25'], ['ordered', 'on']]);
    expect(res.status).toBe(200);
    const [row] = await t.sql<{ id: string }[]>`select id from webhook_endpoints where account_id = ${a.accountId} and url = 'http://127.0.0.1:9/options'`;
    expect(await options(row!.id)).toEqual({ rate_limit: 25, ordered: true });
    const page = await c.get(`/dashboard/webhooks/${row!.id}`);
    expect(page.html).toContain('25 deliveries per second');
    expect(page.html).toContain('Yes: deliveries about one object go one at a time');

    const edit = await c.get(`/dashboard/webhooks/${row!.id}/edit`);
    expect(edit.html).toMatch(/id="rate_limit"[^>]*value="25"/);
    expect(edit.html).toMatch(/id="ordered"[^>]*checked/);
    const saved = await post(`/dashboard/webhooks/${row!.id}`, [['url', 'http://127.0.0.1:9/options'], ['enabled_events', '*'], ['rate_limit', '']]);
    expect(saved.status).toBe(303);
    expect(await options(row!.id)).toEqual({ rate_limit: null, ordered: false });
  });

  it('when the rate limit is not a whole number from 1 to 1000, then the form says so beside the field and nothing changes', async () => {
    const ep = await createEndpoint(t, a.test, { url: 'http://127.0.0.1:9/bad', rate_limit: 3 });
    for (const bad of ['0', '5000', '2.5', 'fast']) {
      const res = await post(`/dashboard/webhooks/${ep.id}`, [['url', 'http://127.0.0.1:9/bad'], ['enabled_events', '*'], ['rate_limit', bad]]);
      expect(res.status).toBe(400);
      expect(res.html).toMatch(/id="rate_limit-error"/);
      expect(await options(ep.id)).toEqual({ rate_limit: 3, ordered: false });
    }
  });
});
