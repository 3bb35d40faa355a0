import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer, type TestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';
import { DashClient, formKey, signedIn } from './client.ts';
import { emit } from '../helpers/events.ts';
import { createEndpoint } from '../helpers/factories.ts';
import { useReceiver, verifyWithStripe } from '../helpers/receiver.ts';

// The Webhooks section: every action through the webhooks services of /v1/webhook-endpoints.
const t = useTestServer({ workers: true, env: { WEBHOOK_ALLOW_INSECURE_TARGETS: 'true', WEBHOOK_BACKOFF_BASE_MS: '20' } });
type Account = { accountId: string; test: string; live: string };
let a: Account;
let b: Account;
let c: DashClient;
const rx = useReceiver((_n, r) => (r.path.startsWith('/down') && !healed.has(r.path) ? 500 : 200));
const healed = new Set<string>();

beforeAll(async () => {
  a = await t.account();
  b = await t.account();
  c = await signedIn(t, a.accountId, 'owner@webhooks.example');
});

const forPath = (path: string) => (r: { path: string }) => r.path === path;
const SECRET = /data-copy="(whsec_[A-Za-z0-9_-]+)"/;

/** A form with repeated fields (the event checkboxes), as the page's form sends it. */
function postPairs(d: DashClient, path: string, pairs: Array<[string, string]>, own: Record<string, string> = {}) {
  const form = [['_csrf', own._csrf ?? d.token], ['form_mode', own.form_mode ?? d.mode], ['idempotency_key', own.idempotency_key ?? formKey()], ...pairs];
  // URLSearchParams takes a list of pairs as well as a record: the client passes it through.
  return d.send('POST', path, form as unknown as Record<string, string>);
}

const endpointRow = async (srv: TestServer, id: string) =>
  (await srv.sql<{ url: string; description: string | null; enabled_events: string[]; is_active: boolean; secret: string; previous_secret: string | null; previous_secret_expires_at: Date | null }[]>`
    select url, description, enabled_events, is_active, secret, previous_secret, previous_secret_expires_at from webhook_endpoints where id = ${id}`)[0];
const endpointCount = async (srv: TestServer, accountId: string) =>
  Number((await srv.sql`select count(*) from webhook_endpoints where account_id = ${accountId}`)[0]!.count);
const deliveries = (endpointId: string) =>
  t.sql<{ id: string; event_id: string; status: string }[]>`select id, event_id, status from webhook_deliveries where endpoint_id = ${endpointId} order by id`;

describe('webhook endpoints in the dashboard', () => {
  it('when endpoints exist, then the list shows them newest first and pages with cursors, never with a secret', async () => {
    const { accountId, test } = await t.account();
    const d = await signedIn(t, accountId, 'pager@webhooks.example');
    const made = [];
    for (let i = 0; i < 12; i++) made.push(await createEndpoint(t, test, { url: `https://hooks${i}.example.com/in`, description: `Hook ${i}` }));
    const first = await d.get('/dashboard/webhooks');
    expect(first.status).toBe(200);
    const shown = (html: string) => [...html.matchAll(/href="\/dashboard\/webhooks\/(we_[a-z0-9]+)"/g)].map((m) => m[1]);
    expect(shown(first.html)).toEqual(made.slice(2).reverse().map((e) => e.id));
    expect(first.html).toContain('https://hooks11.example.com/in');
    const older = /href="([^"]+starting_after=[^"]+)"/.exec(first.html)![1]!.replaceAll('&amp;', '&');
    expect(shown((await d.get(older)).html)).toEqual(made.slice(0, 2).reverse().map((e) => e.id));
    for (const e of made) expect(first.html).not.toContain(e.signing_secret);
    const bad = await d.get('/dashboard/webhooks?starting_after=nope');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('starting_after');
  });

  it('when an endpoint is added, then the answer shows its secret once (the one stored), a replay of the form shows the endpoint page without it, and the endpoint page never shows it', async () => {
    const form = await c.get('/dashboard/webhooks/new');
    expect(form.status).toBe(200);
    expect(form.html).toContain('value="*"');
    expect(form.html).toContain('value="payment.succeeded"');
    const before = await endpointCount(t, a.accountId);
    const key = formKey();
    const res = await postPairs(c, '/dashboard/webhooks', [['url', ` ${rx.url}/created `], ['description', 'Orders'], ['enabled_events', 'payment.succeeded'], ['enabled_events', 'refund.updated']], { idempotency_key: key });
    expect(res.status).toBe(200);
    const secret = SECRET.exec(res.html)![1]!;
    expect(res.html).toContain('shown only once');
    const [row] = await t.sql<{ id: string; secret: string }[]>`select id, secret from webhook_endpoints where account_id = ${a.accountId} order by id desc limit 1`;
    expect(row!.secret).toBe(secret);
    const api = await t.request('GET', `/v1/webhook-endpoints/${row!.id}`, { key: a.test });
    expect(api.body).toMatchObject({ url: `${rx.url}/created`, description: 'Orders', enabled_events: ['payment.succeeded', 'refund.updated'], is_active: true, livemode: false });
    expect(await endpointCount(t, a.accountId)).toBe(before + 1);

    // A reload of the answer posts the same form again: the endpoint page, no secret, no second endpoint.
    const replay = await postPairs(c, '/dashboard/webhooks', [['url', ` ${rx.url}/created `], ['description', 'Orders'], ['enabled_events', 'payment.succeeded'], ['enabled_events', 'refund.updated']], { idempotency_key: key });
    expect(replay.status).toBe(303);
    expect(replay.location).toBe(`/dashboard/webhooks/${row!.id}`);
    expect(replay.html).not.toContain(secret);
    expect(await endpointCount(t, a.accountId)).toBe(before + 1);
    const page = await c.get(replay.location!);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`${rx.url}/created`);
    expect(page.html).toContain('refund.updated');
    expect(page.html).not.toContain(secret);
    expect(page.html).not.toContain('whsec_');
    expect((await c.get(`/dashboard/webhooks/${row!.id}/edit`)).html).not.toContain('whsec_');
    expect((await c.get(`/dashboard/webhooks/${row!.id}/deliveries`)).html).not.toContain('whsec_');
  });

  it('when "All events" or no event is chosen, then the API rule applies: * alone subscribes to all, none or * with a type is refused beside the events and nothing is written', async () => {
    await c.get('/dashboard/webhooks/new');
    const all = await postPairs(c, '/dashboard/webhooks', [['url', `${rx.url}/all`], ['enabled_events', '*']]);
    expect(all.status).toBe(200);
    const [row] = await t.sql`select enabled_events from webhook_endpoints where account_id = ${a.accountId} order by id desc limit 1`;
    expect(row!.enabled_events).toEqual(['*']);
    const before = await endpointCount(t, a.accountId);
    for (const [pairs, message] of [
      [[['url', `${rx.url}/none`]], 'must list at least one event type'],
      [[['url', `${rx.url}/mixed`], ['enabled_events', '*'], ['enabled_events', 'payment.succeeded']], '"*" subscribes to every type and must be the only entry'],
      [[['url', `${rx.url}/forged`], ['enabled_events', 'payment.maybe']], "unknown event type 'payment.maybe'"],
    ] as Array<[Array<[string, string]>, string]>) {
      await c.get('/dashboard/webhooks/new');
      const res = await postPairs(c, '/dashboard/webhooks', pairs);
      expect(res.status).toBe(400);
      const beside = /<p class="field-error" id="enabled_events-error">([^<]*)<\/p>/.exec(res.html);
      expect(beside?.[1]?.replaceAll('&quot;', '"').replaceAll('&#39;', "'")).toContain(message);
      expect(res.html).toContain(`value="${pairs[0]![1]}"`); // what was typed comes back
    }
    expect(await endpointCount(t, a.accountId)).toBe(before);
  });

  it('when an endpoint is edited, then url, description and events change as PATCH would change them', async () => {
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/edit`, description: 'Before', enabled_events: ['payment.succeeded'] });
    const edit = await c.get(`/dashboard/webhooks/${ep.id}/edit`);
    expect(edit.html).toContain(`value="${rx.url}/edit"`);
    expect(edit.html).toMatch(/value="payment.succeeded" checked/);
    const res = await postPairs(c, `/dashboard/webhooks/${ep.id}`, [['url', `${rx.url}/edited`], ['description', ''], ['enabled_events', 'invoice.paid'], ['enabled_events', 'dispute.created']]);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/webhooks/${ep.id}?done=updated`);
    expect(await endpointRow(t, ep.id)).toMatchObject({ url: `${rx.url}/edited`, description: null, enabled_events: ['invoice.paid', 'dispute.created'], is_active: true, secret: ep.signing_secret });
    expect((await c.get(res.location!)).html).toContain('Changes saved.');
    // Endpoint changes record no events, on the API as here.
    expect(await t.sql`select 1 from events where account_id = ${a.accountId}`).toHaveLength(0);
  });

  it('when an endpoint is paused, then new events wait PAUSED and nothing is sent; when it is resumed, they are sent', async () => {
    const { accountId, test } = await t.account();
    const d = await signedIn(t, accountId, 'pause@webhooks.example');
    const ep = await createEndpoint(t, test, { url: `${rx.url}/pause` });
    const page = await d.get(`/dashboard/webhooks/${ep.id}`);
    expect(page.html).toContain(`action="/dashboard/webhooks/${ep.id}/pause"`);
    const paused = await d.post(`/dashboard/webhooks/${ep.id}/pause`, {});
    expect(paused.location).toBe(`/dashboard/webhooks/${ep.id}?done=paused`);
    expect((await endpointRow(t, ep.id))!.is_active).toBe(false);
    const shown = await d.get(paused.location!);
    expect(shown.html).toContain('PAUSED');
    expect(shown.html).toContain(`action="/dashboard/webhooks/${ep.id}/resume"`);

    const event = await emit(t, accountId, false, 'payment.succeeded');
    const control = await createEndpoint(t, test, { url: `${rx.url}/pause-control` });
    await emit(t, accountId, false, 'payment.succeeded');
    await rx.waitFor(1, 10_000, forPath('/pause-control'));
    expect((await deliveries(ep.id)).map((r) => r.status)).toEqual(['PAUSED', 'PAUSED']);
    expect(rx.received.filter(forPath('/pause'))).toHaveLength(0);
    expect((await d.get(`/dashboard/webhooks/${ep.id}/deliveries?status=PAUSED`)).html).toContain(event.id);

    await d.get(`/dashboard/webhooks/${ep.id}`);
    const resumed = await d.post(`/dashboard/webhooks/${ep.id}/resume`, {});
    expect(resumed.location).toBe(`/dashboard/webhooks/${ep.id}?done=resumed`);
    await rx.waitFor(2, 10_000, forPath('/pause'));
    await eventually(async () => (await deliveries(ep.id)).every((r) => r.status === 'SUCCEEDED'));
    expect((await endpointRow(t, ep.id))!.is_active).toBe(true);
    expect(control.id).toBeTruthy();
  });

  it('when the secret is rotated, then the new one is shown once, the old one signs for 24 hours, and the endpoint page says so without either', async () => {
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/rotate` });
    const confirm = await c.get(`/dashboard/webhooks/${ep.id}?confirm=rotate`);
    expect(confirm.html).toContain('Rotate the signing secret?');
    const key = formKey();
    const res = await c.post(`/dashboard/webhooks/${ep.id}/rotate-secret`, { idempotency_key: key });
    expect(res.status).toBe(200);
    const secret = SECRET.exec(res.html)![1]!;
    expect(secret).not.toBe(ep.signing_secret);
    const row = (await endpointRow(t, ep.id))!;
    expect(row.secret).toBe(secret);
    expect(row.previous_secret).toBe(ep.signing_secret);
    const hours = (row.previous_secret_expires_at!.getTime() - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    const replay = await c.post(`/dashboard/webhooks/${ep.id}/rotate-secret`, { idempotency_key: key });
    expect(replay.status).toBe(303);
    expect(replay.location).toBe(`/dashboard/webhooks/${ep.id}`);
    expect((await endpointRow(t, ep.id))!.secret).toBe(secret);
    const page = await c.get(replay.location!);
    expect(page.html).toContain('Rotation in progress');
    expect(page.html).not.toContain(secret);
    expect(page.html).not.toContain(ep.signing_secret);

    // Both sign a delivery, as after the API's rotate-secret.
    await emit(t, a.accountId, false, 'payment.succeeded');
    const [req] = await rx.waitFor(1, 10_000, forPath('/rotate'));
    expect(() => verifyWithStripe(req!, secret)).not.toThrow();
    expect(() => verifyWithStripe(req!, ep.signing_secret)).not.toThrow();
  });

  it('when delete is confirmed, then the endpoint is gone and its held deliveries are cancelled; the same form again does nothing more', async () => {
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/delete` });
    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
    await emit(t, a.accountId, false, 'payment.succeeded');
    const confirm = await c.get(`/dashboard/webhooks/${ep.id}?confirm=delete`);
    expect(confirm.html).toContain('Delete this endpoint?');
    const key = formKey();
    const res = await c.post(`/dashboard/webhooks/${ep.id}/delete`, { idempotency_key: key });
    expect(res.location).toBe('/dashboard/webhooks?done=deleted');
    expect(await endpointRow(t, ep.id)).toBeUndefined();
    expect((await deliveries(ep.id)).map((r) => r.status)).toEqual(['CANCELLED']);
    expect((await c.get(res.location!)).html).toContain('Endpoint deleted.');
    const again = await c.post(`/dashboard/webhooks/${ep.id}/delete`, { idempotency_key: key });
    expect(again.location).toBe('/dashboard/webhooks?done=deleted');
    expect((await c.post(`/dashboard/webhooks/${ep.id}/delete`, {})).status).toBe(404);
    expect((await c.get(`/dashboard/webhooks/${ep.id}`)).status).toBe(404);
  });
});

describe('test events and deliveries in the dashboard', () => {
  it('when a test event is sent, then the endpoint alone receives a signed sample, its delivery is in the deliveries view, and the events list does not show it', async () => {
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/dash-test`, enabled_events: ['invoice.paid'] });
    const other = await createEndpoint(t, a.test, { url: `${rx.url}/dash-test-other` });
    const page = await c.get(`/dashboard/webhooks/${ep.id}`);
    expect(page.html).toContain('Send test event');
    const res = await c.post(`/dashboard/webhooks/${ep.id}/test`, { type: 'refund.updated' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/webhooks/${ep.id}/deliveries?done=test_sent`);
    const [req] = await rx.waitFor(1, 10_000, forPath('/dash-test'));
    const event = verifyWithStripe(req!, ep.signing_secret) as unknown as { id: string; type: string; data: { object: { object: string; id: string } } };
    expect(event.type).toBe('refund.updated');
    expect(event.data.object.object).toBe('refund');
    expect(await t.sql`select sample, type from events where id = ${event.id}`).toEqual([{ sample: true, type: 'refund.updated' }]);
    await eventually(async () => (await deliveries(ep.id))[0]?.status === 'SUCCEEDED');
    const view = await c.get(res.location!);
    expect(view.html).toContain('Test event sent.');
    expect(view.html).toContain(`href="/dashboard/events/${event.id}"`);
    expect(view.html).toContain('refund.updated');
    expect(view.html).toContain('SUCCEEDED');
    expect(await deliveries(other.id)).toEqual([]);
    const api = await t.request('GET', '/v1/events?limit=100', { key: a.test });
    expect(api.body.data.map((e: { id: string }) => e.id)).not.toContain(event.id);
  });

  it('when the test event type is not one of the catalogue, or the endpoint is paused, then the page names the problem and nothing is sent', async () => {
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/dash-test-bad` });
    await c.get(`/dashboard/webhooks/${ep.id}`);
    const bad = await c.post(`/dashboard/webhooks/${ep.id}/test`, { type: 'payment.maybe' });
    expect(bad.status).toBe(400);
    expect(bad.html).toMatch(/<p class="field-error" id="type-error">Invalid type: must be one of/);
    const missing = await c.post(`/dashboard/webhooks/${ep.id}/test`, {});
    expect(missing.status).toBe(400);
    expect(missing.html).toContain('Missing required param: type.');
    await t.request('PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: a.test, body: { is_active: false } });
    await c.get(`/dashboard/webhooks/${ep.id}`);
    const paused = await c.post(`/dashboard/webhooks/${ep.id}/test`, { type: 'payment.succeeded' });
    expect(paused.status).toBe(400);
    expect(paused.html).toContain('This webhook endpoint is paused');
    expect(await deliveries(ep.id)).toEqual([]);
  });

  it('when deliveries have failed, then the failed view lists them, and "retry all failed since" sends each again once, with the count', async () => {
    const { accountId, test } = await t.account();
    const d = await signedIn(t, accountId, 'retry@webhooks.example');
    const ep = await createEndpoint(t, test, { url: `${rx.url}/down-dash` });
    const events = [await emit(t, accountId, false, 'payment.failed'), await emit(t, accountId, false, 'payment.succeeded')];
    await eventually(async () => {
      const rows = await deliveries(ep.id);
      return rows.length === 2 && rows.every((r) => r.status === 'FAILED');
    }, 30_000);
    const ok = await createEndpoint(t, test, { url: `${rx.url}/dash-ok` });
    expect(ok.id).toBeTruthy();

    const failedView = await d.get(`/dashboard/webhooks/${ep.id}/deliveries?status=FAILED`);
    expect(failedView.status).toBe(200);
    expect(failedView.html).toContain('<h1>Failed deliveries</h1>');
    for (const e of events) expect(failedView.html).toContain(`href="/dashboard/events/${e.id}"`);
    expect(failedView.html).toMatch(/<td class="num">7<\/td>/);
    expect(failedView.html).toContain('<span class="mono">500</span>');
    expect((await d.get(`/dashboard/webhooks/${ep.id}/deliveries?status=SUCCEEDED`)).html).toContain('No succeeded deliveries');
    const badFilter = await d.get(`/dashboard/webhooks/${ep.id}/deliveries?status=LOST`);
    expect(badFilter.status).toBe(400);
    expect(badFilter.html).toContain('status');

    healed.add('/down-dash');
    await d.get(`/dashboard/webhooks/${ep.id}/deliveries?status=FAILED`);
    const since = new Date(Date.now() - 3600_000).toISOString().slice(0, 16);
    const key = formKey();
    const res = await d.post(`/dashboard/webhooks/${ep.id}/retry-failed`, { since, idempotency_key: key });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/webhooks/${ep.id}/deliveries?retried=2`);
    expect((await d.get(res.location!)).html).toContain('2 failed deliveries were sent again.');
    await eventually(async () => (await deliveries(ep.id)).filter((r) => r.status === 'SUCCEEDED').length === 2);
    expect(await deliveries(ep.id)).toHaveLength(4);

    // The same form again (a double click): the same answer, nothing more; a new form finds nothing to retry.
    const again = await d.post(`/dashboard/webhooks/${ep.id}/retry-failed`, { since, idempotency_key: key });
    expect(again.location).toBe(res.location);
    const fresh = await d.post(`/dashboard/webhooks/${ep.id}/retry-failed`, { since });
    expect(fresh.location).toBe(`/dashboard/webhooks/${ep.id}/deliveries?retried=0`);
    expect((await d.get(fresh.location!)).html).toContain('No failed delivery to retry since that time');
    expect(await deliveries(ep.id)).toHaveLength(4);
    expect(await deliveries(ok.id)).toEqual([]);

    for (const [value, message] of [['yesterday', 'Enter a date and time'], ['', 'Missing required param: since.']] as const) {
      await d.get(`/dashboard/webhooks/${ep.id}/deliveries`);
      const bad = await d.post(`/dashboard/webhooks/${ep.id}/retry-failed`, { since: value });
      expect(bad.status).toBe(400);
      expect(bad.html).toMatch(new RegExp(`<p class="field-error" id="since-error">${message}`));
    }
    expect(await deliveries(ep.id)).toHaveLength(4);
  });
});

describe('webhooks: access control', () => {
  it("when an endpoint of another account or of live mode is asked for, then every page and action answers 404 and nothing changes", async () => {
    const theirs = await createEndpoint(t, b.test, { url: `${rx.url}/theirs` });
    const live = await createEndpoint(t, a.live, { url: `${rx.url}/live` });
    for (const ep of [theirs, live]) {
      for (const path of ['', '/edit', '/deliveries', '?confirm=delete']) expect((await c.get(`/dashboard/webhooks/${ep.id}${path}`)).status).toBe(404);
      await c.get('/dashboard/webhooks');
      for (const [path, form] of [
        ['', { url: `${rx.url}/hijack`, enabled_events: '*' }],
        ['/pause', {}],
        ['/resume', {}],
        ['/rotate-secret', {}],
        ['/delete', {}],
        ['/test', { type: 'payment.succeeded' }],
        ['/retry-failed', { since: '2020-01-01T00:00' }],
      ] as const) {
        expect((await c.post(`/dashboard/webhooks/${ep.id}${path}`, form)).status, path).toBe(404);
      }
      const row = (await endpointRow(t, ep.id))!;
      expect(row).toMatchObject({ url: ep.url, is_active: true, secret: ep.signing_secret, previous_secret: null });
      expect(await deliveries(ep.id)).toEqual([]);
    }
    const list = await c.get('/dashboard/webhooks');
    expect(list.html).not.toContain(theirs.id);
    expect(list.html).not.toContain(live.id);
    expect((await c.get('/dashboard/webhooks/we_nope')).status).toBe(404);
  });

  it('when there is no session, or the CSRF token is wrong or missing, or the form was opened in the other mode, then nothing changes', async () => {
    const ep = await createEndpoint(t, a.test, { url: `${rx.url}/guarded` });
    const before = await endpointCount(t, a.accountId);
    const anon = new DashClient(t);
    expect((await anon.get('/dashboard/webhooks')).location).toBe('/dashboard/sign-in');
    expect((await anon.post('/dashboard/webhooks', { url: `${rx.url}/anon`, enabled_events: '*' })).location).toBe('/dashboard/sign-in');
    expect((await anon.post(`/dashboard/webhooks/${ep.id}/pause`, {})).location).toBe('/dashboard/sign-in');
    await c.get('/dashboard/webhooks/new');
    expect((await c.post('/dashboard/webhooks', { url: `${rx.url}/csrf`, enabled_events: '*', _csrf: 'forged' })).status).toBe(403);
    expect((await c.post(`/dashboard/webhooks/${ep.id}/pause`, { _csrf: 'forged' })).status).toBe(403);
    expect((await c.post(`/dashboard/webhooks/${ep.id}/rotate-secret`, { _csrf: 'forged' })).status).toBe(403);
    const noCsrf = await c.send('POST', `/dashboard/webhooks/${ep.id}/delete`, { form_mode: 'test', idempotency_key: formKey() });
    expect(noCsrf.status).toBe(403);
    // Opened in test, posted after switching to live in another tab: refused in both modes.
    const d = await signedIn(t, a.accountId, 'modes@webhooks.example');
    await d.get(`/dashboard/webhooks/${ep.id}`);
    const token = d.token;
    await d.post('/dashboard/mode', { mode: 'live', back: '/dashboard/webhooks' });
    for (const [path, form] of [
      ['/dashboard/webhooks', { url: `${rx.url}/mode`, enabled_events: '*' }],
      [`/dashboard/webhooks/${ep.id}/pause`, {}],
      [`/dashboard/webhooks/${ep.id}/rotate-secret`, {}],
      [`/dashboard/webhooks/${ep.id}/test`, { type: 'payment.succeeded' }],
    ] as const) {
      const res = await d.send('POST', path, { _csrf: token, form_mode: 'test', idempotency_key: formKey(), ...form });
      // The live session finds no test endpoint (404) or refuses the test-mode form (409).
      expect([404, 409], path).toContain(res.status);
    }
    const res = await d.send('POST', '/dashboard/webhooks', { _csrf: token, form_mode: 'test', idempotency_key: formKey(), url: `${rx.url}/mode`, enabled_events: '*' });
    expect(res.status).toBe(409);
    expect(res.html).toContain('This form was opened while viewing test data');
    expect(await endpointCount(t, a.accountId)).toBe(before);
    expect((await endpointRow(t, ep.id))!).toMatchObject({ is_active: true, secret: ep.signing_secret, previous_secret: null });
    expect(await deliveries(ep.id)).toEqual([]);
  });
});

describe('the API refusals, as a production service gives them', () => {
  // No WEBHOOK_ALLOW_INSECURE_TARGETS: http and private addresses are refused, as in production.
  const p = useTestServer();
  it('when the URL is http, a private address or the 17th endpoint, then the form comes back with the API message, and nothing is written', async () => {
    const acct = await p.account();
    const d = await signedIn(p, acct.accountId, 'rules@webhooks.example');
    for (const [url, message] of [
      ['http://hooks.example.com/in', 'Invalid url: must be an https:// URL.'],
      ['https://10.0.0.8/in', 'Invalid url: must not point at a loopback, private'],
      ['https://localhost/in', 'Invalid url: must not point at localhost.'],
    ]) {
      await d.get('/dashboard/webhooks/new');
      const res = await d.post('/dashboard/webhooks', { url: url!, enabled_events: '*' });
      expect(res.status).toBe(400);
      expect(res.html).toMatch(new RegExp(`<p class="field-error" id="url-error">${message!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      expect(res.html).toContain('aria-invalid="true"');
    }
    expect(await endpointCount(p, acct.accountId)).toBe(0);
    for (let i = 0; i < 16; i++) await createEndpoint(p, acct.test, { url: `https://hooks${i}.example.com/in` });
    await d.get('/dashboard/webhooks/new');
    const full = await d.post('/dashboard/webhooks', { url: 'https://seventeen.example.com/in', enabled_events: '*' });
    expect(full.status).toBe(400);
    expect(full.html).toContain('An account has at most 16 webhook endpoints per mode');
    expect(await endpointCount(p, acct.accountId)).toBe(16);
    // The other mode has its own 16.
    await d.post('/dashboard/mode', { mode: 'live', back: '/dashboard/webhooks' });
    await d.get('/dashboard/webhooks/new');
    expect((await d.post('/dashboard/webhooks', { url: 'https://live.example.com/in', enabled_events: '*' })).status).toBe(200);
    expect((await p.sql`select livemode from webhook_endpoints where url = 'https://live.example.com/in'`)[0]!.livemode).toBe(true);
  });
});
