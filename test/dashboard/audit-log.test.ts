import { describe, expect, it } from 'vitest';
import { auditEventsRouter } from '../../src/audit/routes.ts';
import { Payer } from '../helpers/payer.ts';
import { routesOf } from '../helpers/routes.ts';
import { useTestServer } from '../helpers/server.ts';
import { createUser, DashClient, PASSWORD } from './client.ts';

// A scripted day of changes (issue 25, point 4), through the dashboard and the API: every change
// is in the audit log exactly once, with its actor and address, and no secret is anywhere in it.
const t = useTestServer({ env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true' } });

describe('the audit log after a day of changes', () => {
  it('when users and keys change the team, keys, endpoints, settings and refunds, then each change is recorded once with who and from where, and no secret', async () => {
    const a = await t.account();
    const secrets: string[] = [a.test, a.live, PASSWORD];
    await createUser(t, a.accountId, 'owner@day.example');
    // A failed sign-in, then the owner signs in.
    expect((await new DashClient(t).signIn('owner@day.example', 'not the password at all')).status).toBe(401);
    const owner = new DashClient(t);
    expect((await owner.signIn('owner@day.example', PASSWORD)).status).toBe(303);

    // The team: invite, change the role, remove.
    await owner.get('/dashboard/team');
    expect((await owner.post('/dashboard/team/invitations', { email: 'dev@day.example', role: 'developer' })).status).toBe(303);
    const [dev] = await t.sql<{ id: string }[]>`select id from dashboard_users where email = 'dev@day.example'`;
    const [mail] = await t.sql<{ text_body: string }[]>`select text_body from emails where to_address = 'dev@day.example'`;
    secrets.push(/token=([A-Za-z0-9_-]{43})/.exec(mail!.text_body)![1]!);
    await owner.get('/dashboard/team');
    expect((await owner.post(`/dashboard/team/users/${dev!.id}/role`, { role: 'analyst' })).status).toBe(303);
    await owner.get('/dashboard/team');
    expect((await owner.post(`/dashboard/team/users/${dev!.id}/remove`, {})).status).toBe(303);
    await owner.get('/dashboard/team');
    expect((await owner.post('/dashboard/team/refund-limits', { currency: 'usd', amount: '10.00' })).status).toBe(303);

    // Keys through the API.
    const made = await t.request('POST', '/v1/api-keys', { key: a.test, body: {} });
    secrets.push(made.body.secret);
    const rolled = await t.request('POST', `/v1/api-keys/${made.body.id}/roll`, { key: a.test, body: {} });
    secrets.push(rolled.body.secret);
    expect((await t.request('POST', `/v1/api-keys/${rolled.body.id}/revoke`, { key: a.test, body: {} })).status).toBe(200);

    // Endpoints through the API.
    const we = await t.request('POST', '/v1/webhook-endpoints', { key: a.test, body: { url: 'https://hooks.example.com/in', enabled_events: ['*'] } });
    secrets.push(we.body.signing_secret);
    expect((await t.request('PATCH', `/v1/webhook-endpoints/${we.body.id}`, { key: a.test, body: { description: 'Orders' } })).status).toBe(200);
    const rotated = await t.request('POST', `/v1/webhook-endpoints/${we.body.id}/rotate-secret`, { key: a.test, body: {} });
    secrets.push(rotated.body.signing_secret);
    expect((await t.request('DELETE', `/v1/webhook-endpoints/${we.body.id}`, { key: a.test })).status).toBe(200);

    // Settings through the API (live key), a refund through the dashboard.
    expect((await t.request('PATCH', '/v1/account', { key: a.live, body: { business_name: 'Day Tea' } })).status).toBe(200);
    const cs = await t.request('POST', '/v1/checkout/sessions', { key: a.test, body: { amount: 4900, currency: 'usd', success_url: 'https://shop.example/ok' } });
    await new Payer(t).pay(cs.body.id);
    const [pay] = await t.sql<{ id: string }[]>`select id from payments where account_id = ${a.accountId} and status = 'SUCCEEDED'`;
    await owner.get(`/dashboard/payments/${pay!.id}`);
    expect((await owner.post(`/dashboard/payments/${pay!.id}/refunds`, { amount: '1.00' })).status).toBe(303);

    const rows = await t.sql<Record<string, unknown>[]>`select * from audit_events where account_id = ${a.accountId} order by id`;
    const count = (action: string) => rows.filter((r) => r.action === action).length;
    const expected: Array<[string, 'user' | 'api_key']> = [
      ['user.sign_in_failed', 'user'],
      ['user.signed_in', 'user'],
      ['team.user_invited', 'user'],
      ['team.role_changed', 'user'],
      ['team.invitation_revoked', 'user'], // the invitee had not chosen a password yet
      ['settings.refund_limit_changed', 'user'],
      ['api_key.created', 'api_key'],
      ['api_key.rolled', 'api_key'],
      ['api_key.revoked', 'api_key'],
      ['webhook_endpoint.created', 'api_key'],
      ['webhook_endpoint.updated', 'api_key'],
      ['webhook_endpoint.secret_rotated', 'api_key'],
      ['webhook_endpoint.deleted', 'api_key'],
      ['account.settings_updated', 'api_key'],
      ['refund.created', 'user'],
    ];
    for (const [action, actor] of expected) {
      expect(count(action), action).toBe(1);
      const row = rows.find((r) => r.action === action)!;
      expect(row.actor_type, action).toBe(actor);
      expect(row.actor_id, action).toMatch(actor === 'user' ? /^usr_/ : /^key_/);
      expect(row.actor_label, action).toMatch(actor === 'user' ? /@day\.example$/ : /^sk_(test|live)_…[0-9A-Za-z]{4}$/);
      expect(row.ip_address, action).toMatch(/127\.0\.0\.1/);
    }
    expect(rows).toHaveLength(expected.length);
    const all = JSON.stringify(rows);
    for (const secret of secrets) expect(all).not.toContain(secret);

    // The API lists them (newest first, cursor pages), the test key sees test and account-wide ones.
    const first = await t.request('GET', '/v1/audit-events?limit=5', { key: a.test });
    expect(first.body).toMatchObject({ object: 'list', url: '/v1/audit-events', has_more: true });
    const next = await t.request('GET', `/v1/audit-events?limit=100&starting_after=${first.body.data.at(-1).id}`, { key: a.test });
    const listed = [...first.body.data, ...next.body.data];
    expect(listed.map((e: { id: string }) => e.id)).toEqual(rows.filter((r) => r.livemode !== true).map((r) => r.id).reverse());
    const byAction = await t.request('GET', '/v1/audit-events?action=api_key.rolled', { key: a.test });
    expect(byAction.body.data.map((e: { action: string }) => e.action)).toEqual(['api_key.rolled']);
    expect((await t.request('GET', '/v1/audit-events?action=DROP', { key: a.test })).body.error.param).toBe('action');

    // The dashboard page, filtered by user.
    const me = rows.find((r) => r.action === 'user.signed_in')!.actor_id as string;
    const page = await owner.get(`/dashboard/audit-log?actor=${me}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<span class="mono">team.role_changed</span>');
    expect(page.html).not.toContain('<span class="mono">api_key.rolled</span>');
    const dated = await owner.get('/dashboard/audit-log?from=2000-01-01&to=2000-01-02');
    expect(dated.html).toContain('Nothing recorded for these filters.');
  });

  it('when anyone tries to change the log, then there is no route for it and the database refuses', async () => {
    expect(routesOf(auditEventsRouter(t.s)).map((r) => r.method)).toEqual(['GET']);
    const a = await t.account();
    await t.request('POST', '/v1/api-keys', { key: a.test, body: {} });
    for (const m of ['POST', 'PATCH', 'DELETE']) expect((await t.request(m, '/v1/audit-events', { key: a.test, body: m === 'DELETE' ? undefined : {} })).status).toBe(404);
    await expect(t.sql`update audit_events set action = 'x' where account_id = ${a.accountId}`).rejects.toThrow(/append-only/);
    await expect(t.sql`delete from audit_events where account_id = ${a.accountId}`).rejects.toThrow(/append-only/);
  });

  it('when an analyst or developer opens the audit log, then it is refused', async () => {
    const a = await t.account();
    await createUser(t, a.accountId, 'analyst@day.example');
    await t.sql`update dashboard_users set role = 'analyst' where email = 'analyst@day.example'`;
    const c = new DashClient(t);
    await c.signIn('analyst@day.example', PASSWORD);
    expect((await c.get('/dashboard/audit-log')).status).toBe(403);
  });
});
