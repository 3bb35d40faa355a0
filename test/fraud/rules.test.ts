import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();
let key: string;
let liveKey: string;
let accountId: string;
beforeAll(async () => {
  const a = await t.account();
  [key, liveKey, accountId] = [a.test, a.live, a.accountId];
});

const CARD_TESTING = { name: 'Card testing', action: 'block', conditions: [{ attribute: 'client_ip_attempts', window_seconds: 600, operator: 'gte', value: 5 }] };

describe('/v1/fraud/rules and /v1/fraud/lists', () => {
  it('when a rule is created, read, updated, listed and deleted, then each answer is the rule object and each change is in the audit log', async () => {
    const created = await t.request('POST', '/v1/fraud/rules', { key, body: { ...CARD_TESTING, conditions: [...CARD_TESTING.conditions, { attribute: 'card_country', operator: 'in', values: ['ng', 'Gh'] }] } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'fraud_rule',
      livemode: false,
      name: 'Card testing',
      action: 'block',
      enabled: true,
      description: 'client_ip_attempts in 600s >= 5 and card_country in [NG, GH]',
    });
    expect(created.body.id).toMatch(/^frl_/);
    const id = created.body.id;
    expect((await t.request('GET', `/v1/fraud/rules/${id}`, { key })).body).toEqual(created.body);
    const patched = await t.request('PATCH', `/v1/fraud/rules/${id}`, { key, body: { enabled: false, action: 'review' } });
    expect(patched.body).toMatchObject({ enabled: false, action: 'review', name: 'Card testing' });
    const list = await t.request('GET', '/v1/fraud/rules?limit=5', { key });
    expect(list.body).toMatchObject({ object: 'list', url: '/v1/fraud/rules', has_more: false });
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([id]);
    // Tenancy: the live key does not see the test rule.
    expect((await t.request('GET', `/v1/fraud/rules/${id}`, { key: liveKey })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/fraud/rules/${id}`, { key })).body).toEqual({ id, object: 'fraud_rule', deleted: true });
    expect((await t.request('GET', `/v1/fraud/rules/${id}`, { key })).status).toBe(404);
    const audit = await t.sql<{ action: string; actor_type: string }[]>`
      select action, actor_type from audit_events where account_id = ${accountId} and object_id = ${id} order by id`;
    expect(audit).toEqual([
      { action: 'fraud_rule.created', actor_type: 'api_key' },
      { action: 'fraud_rule.updated', actor_type: 'api_key' },
      { action: 'fraud_rule.deleted', actor_type: 'api_key' },
    ]);
  });

  it.each([
    [{ ...CARD_TESTING, action: 'maybe' }, 'action'],
    [{ ...CARD_TESTING, conditions: [] }, 'conditions'],
    [{ ...CARD_TESTING, conditions: [{ attribute: 'ip_reputation', operator: 'gt', value: 1 }] }, 'conditions[0][attribute]'],
    [{ ...CARD_TESTING, conditions: [{ attribute: 'card_attempts', window_seconds: 10, operator: 'gt', value: 1 }] }, 'conditions[0][window_seconds]'],
    [{ ...CARD_TESTING, conditions: [{ attribute: 'currency', operator: 'in', values: ['dollars'] }] }, 'conditions[0][values][0]'],
    [{ ...CARD_TESTING, conditions: [{ attribute: 'amount_cents', operator: 'gte', value: -1 }] }, 'conditions[0][value]'],
    [{ ...CARD_TESTING, name: '' }, 'name'],
    [{ ...CARD_TESTING, colour: 'red' }, 'colour'],
  ])('when a rule is invalid (%j), then 400 names %s', async (body, param) => {
    const res = await t.request('POST', '/v1/fraud/rules', { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it('when a list entry is added, listed by kind and removed, then it is audited and unknown ids answer 404', async () => {
    const item = (await t.request('POST', '/v1/fraud/lists', { key, body: { kind: 'client_ip', value: '2001:db8::/48', note: 'proxy farm' } })).body;
    expect(item).toMatchObject({ object: 'fraud_list_item', kind: 'client_ip', value: '2001:db8::/48', note: 'proxy farm', livemode: false });
    expect((await t.request('GET', '/v1/fraud/lists?kind=client_ip', { key })).body.data).toHaveLength(1);
    expect((await t.request('GET', '/v1/fraud/lists?kind=email', { key })).body.data).toHaveLength(0);
    expect((await t.request('GET', '/v1/fraud/lists?kind=phone', { key })).status).toBe(400);
    expect((await t.request('DELETE', `/v1/fraud/lists/${item.id}`, { key })).body).toEqual({ id: item.id, object: 'fraud_list_item', deleted: true });
    expect((await t.request('DELETE', `/v1/fraud/lists/${item.id}`, { key })).status).toBe(404);
    expect((await t.request('GET', '/v1/fraud/lists/fli_nope', { key })).status).toBe(404);
    const audit = await t.sql`select action from audit_events where object_id = ${item.id} order by id`;
    expect(audit.map((a) => a.action)).toEqual(['fraud_list_item.created', 'fraud_list_item.deleted']);
  });

  it('when a draft rule is tried, then it answers how many of the last 30 days of payments it would have matched, velocity counted as then', async () => {
    const { accountId: acct, test } = await t.account();
    // Seeded through SQL (the test is about the trial, not the payments): 4 attempts from one
    // address a minute apart, 2 from another, one large payment, one 40 days old.
    const now = Date.now();
    const rows = [
      ['203.0.113.9', 1000, 10], ['203.0.113.9', 1000, 9], ['203.0.113.9', 1000, 8], ['203.0.113.9', 1000, 7],
      ['198.51.100.1', 1000, 6], ['198.51.100.1', 90_000, 5], ['203.0.113.9', 1000, 40 * 24 * 60],
    ] as const;
    let n = 0;
    for (const [ip, amount, minutesAgo] of rows) {
      await t.sql`
        insert into payments (id, account_id, livemode, status, amount_cents, currency, client_ip, card_country, created_at)
        values (${`pay_trial${String(n++).padStart(20, '0')}`}, ${acct}, false, 'FAILED', ${amount}, 'usd', ${ip}::inet, 'US', ${new Date(now - minutesAgo * 60_000)})`;
    }
    const velocity = await t.request('POST', '/v1/fraud/rules/try', { key: test, body: { conditions: [{ attribute: 'client_ip_attempts', window_seconds: 3600, operator: 'gte', value: 2 }] } });
    expect(velocity.status).toBe(200);
    expect(velocity.body).toMatchObject({ object: 'fraud_rule_trial', action: 'block', matched: 2, evaluated: 6, truncated: false });
    expect(velocity.body.examples).toEqual(['pay_trial00000000000000000003', 'pay_trial00000000000000000002']);
    const large = await t.request('POST', '/v1/fraud/rules/try', { key: test, body: { action: 'review', conditions: [{ attribute: 'amount_cents', operator: 'gt', value: 50_000 }] } });
    expect(large.body).toMatchObject({ action: 'review', matched: 1, description: 'amount_cents > 50000' });
    const bad = await t.request('POST', '/v1/fraud/rules/try', { key: test, body: { conditions: [{ attribute: 'amount_cents', operator: 'gt' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('conditions[0][value]');
  });

  it('when the trial reads past payments, then the plan uses the (account, livemode, created_at) index', async () => {
    await t.sql`analyze payments`;
    const plan = await t.sql.begin(async (sql) => {
      await sql`set local enable_seqscan = off`;
      return sql<{ 'QUERY PLAN': string }[]>`
        explain select id from payments where account_id = ${accountId} and livemode = false and created_at >= now() - interval '30 days'
        order by created_at desc limit 20000`;
    });
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain('payments_search_created');
  });

  it('when the hosted page counts attempts of a card or an address, then each count is a range scan of its own index', async () => {
    // Many attempts of many cards and addresses, as a busy account has (seeded through SQL).
    await t.sql`
      insert into payments (id, account_id, livemode, status, amount_cents, currency, card_fingerprint, client_ip, created_at)
      select 'pay_plan' || lpad(g::text, 20, '0'), ${accountId}, false, 'FAILED', 1000, 'usd', 'fp_' || (g % 500),
        ('10.0.' || (g % 200) || '.' || (g % 250))::inet, now() - make_interval(secs => g)
      from generate_series(1, 5000) g`;
    await t.sql`analyze payments`;
    const plans = await t.sql.begin(async (sql) => {
      const card = await sql<{ 'QUERY PLAN': string }[]>`
        explain select count(*) from (select 1 from payments where account_id = ${accountId} and livemode = false
          and card_fingerprint = 'fp_x' and created_at > now() - make_interval(secs => 600) limit 10000) t`;
      const ip = await sql<{ 'QUERY PLAN': string }[]>`
        explain select count(*) from (select 1 from payments where account_id = ${accountId} and livemode = false
          and client_ip = '203.0.113.9'::inet and created_at > now() - make_interval(secs => 600) limit 10000) t`;
      return [card, ip].map((p) => p.map((r) => r['QUERY PLAN']).join('\n'));
    });
    expect(plans[0]).toContain('payments_fraud_card');
    expect(plans[1]).toContain('payments_fraud_ip');
  });
});
