import { beforeAll, describe, expect, it } from 'vitest';
import { signedIn, type DashClient } from '../helpers/dash-client.ts';
import { useTestServer } from '../helpers/server.ts';

const t = useTestServer();
let accountId: string;
let owner: DashClient;
beforeAll(async () => {
  ({ accountId } = await t.account());
  owner = await signedIn(t, accountId, 'owner@rules.example');
  await t.sql`update dashboard_users set role = 'owner' where account_id = ${accountId} and email = 'owner@rules.example'`;
  await owner.get('/dashboard/fraud');
});

const rulesOf = () => t.sql<{ id: string; name: string; action: string; conditions: unknown; enabled: boolean }[]>`
  select id, name, action, conditions, enabled from fraud_rules where account_id = ${accountId} order by id`;

describe('/dashboard/fraud over HTTP', () => {
  it('when the rule form is filled with two conditions, then the rule is stored as the API would store it, audited as the user', async () => {
    await owner.get('/dashboard/fraud');
    const res = await owner.post('/dashboard/fraud/rules', {
      name: 'Foreign card testing',
      action: 'block',
      cond_0_attribute: 'card_country', cond_0_operator: 'not_in', cond_0_value: 'us, ca',
      cond_1_attribute: '', cond_1_operator: 'gte', cond_1_value: '',
      cond_2_attribute: 'card_attempts', cond_2_operator: 'gte', cond_2_value: '3', cond_2_window: '3600',
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/fraud?done=rule_created');
    const [rule] = await rulesOf();
    expect(rule).toMatchObject({
      name: 'Foreign card testing',
      action: 'block',
      enabled: true,
      conditions: [{ attribute: 'card_country', operator: 'not_in', values: ['US', 'CA'] }, { attribute: 'card_attempts', operator: 'gte', value: 3, window_seconds: 3600 }],
    });
    const [audit] = await t.sql`select action, actor_type, actor_label from audit_events where object_id = ${rule!.id}`;
    expect(audit).toMatchObject({ action: 'fraud_rule.created', actor_type: 'user', actor_label: 'owner@rules.example' });
    const page = await owner.get('/dashboard/fraud?done=rule_created');
    expect(page.html).toContain('card_country not in [US, CA] and card_attempts in 3600s &gt;= 3');

    await owner.post(`/dashboard/fraud/rules/${rule!.id}/disable`, {});
    expect((await rulesOf())[0]!.enabled).toBe(false);
    await owner.get('/dashboard/fraud');
    await owner.post(`/dashboard/fraud/rules/${rule!.id}/delete`, {});
    expect(await rulesOf()).toEqual([]);
  });

  it('when a condition is wrong, then the form comes back with the problem beside its row and nothing is stored', async () => {
    await owner.get('/dashboard/fraud');
    const res = await owner.post('/dashboard/fraud/rules', {
      name: 'Velocity', action: 'block',
      cond_0_attribute: '', cond_0_operator: 'gte', cond_0_value: '',
      cond_1_attribute: 'client_ip_attempts', cond_1_operator: 'gte', cond_1_value: '5', cond_1_window: '5',
    });
    expect(res.status).toBe(400);
    expect(res.html).toMatch(/id="cond_1_window"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*id="cond_1_window"/);
    expect(res.html).toContain('must be at least 60');
    expect(res.html).toContain('value="Velocity"');
    expect(await rulesOf()).toEqual([]);
  });

  it('when a block list entry is added and removed from the page, then the list follows; a bad value is named beside its field', async () => {
    await owner.get('/dashboard/fraud');
    const bad = await owner.post('/dashboard/fraud/lists', { kind: 'client_ip', value: 'not an address', note: '' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('A client address is an IPv4 or IPv6 address');
    await owner.get('/dashboard/fraud');
    expect((await owner.post('/dashboard/fraud/lists', { kind: 'email', value: 'Fraud@Example.com', note: 'chargebacks' })).status).toBe(303);
    const [item] = await t.sql<{ id: string; value: string }[]>`select id, value from fraud_list_items where account_id = ${accountId}`;
    expect(item!.value).toBe('fraud@example.com');
    await owner.get('/dashboard/fraud');
    expect((await owner.post(`/dashboard/fraud/lists/${item!.id}/delete`, {})).status).toBe(303);
    expect(await t.sql`select 1 from fraud_list_items where account_id = ${accountId}`).toHaveLength(0);
  });

  it('when an analyst opens the fraud page, then 403: rules are for owners and administrators', async () => {
    const analyst = await signedIn(t, accountId, 'analyst@rules.example');
    await t.sql`update dashboard_users set role = 'analyst' where account_id = ${accountId} and email = 'analyst@rules.example'`;
    expect((await analyst.get('/dashboard/fraud')).status).toBe(403);
  });
});
